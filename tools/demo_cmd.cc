// `hcashare demo`: runs hcashare-demo, the demo's own binary (testing/demo_main.cc), from
// this executable's directory with the same arguments. The demo's simulated node and fake
// kubelet stay out of the shipping CLI; the production image does not hold hcashare-demo.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "common/process.h"
#include "tools/commands.h"

namespace hcashare::cli {

int RunDemo(const std::vector<std::string>& args) {
  const std::string demo = SelfDir() + "/hcashare-demo";
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(demo.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(demo.c_str(), argv.data());
  const int err = errno;
  std::cerr << "hcashare demo: cannot run " << demo << ": " << std::strerror(err)
            << "\n(the demo is a separate binary, built with the tests: `ninja hcashare-demo`; "
               "the container image does not include it)\n";
  return 127;
}

}  // namespace hcashare::cli
