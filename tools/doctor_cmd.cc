// `hcashare doctor`: wires the real seams (host, libibverbs, RDMA netlink, limits, the
// environment) into the checks and prints the results.
#include <iostream>
#include <map>

#include "common/host.h"
#include "doctor/check.h"
#include "doctor/limits.h"
#include "doctor/rdma_sysfs.h"
#include "doctor/report.h"
#include "doctor/verbs.h"
#include "json/dump.h"
#include "nl/rdma_netlink.h"
#include "tools/commands.h"

extern char** environ;

namespace hcashare::cli {
namespace {

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

}  // namespace

int RunDoctor(const DoctorOptions& opts) {
  if (!opts.pod.empty()) return RunPodDoctor(opts);
  auto host = NewRootedHost(opts.host_root);
  auto verbs = doctor::NewLibibverbs();
  auto rdma = NewRdmaNetlink();
  auto limits = doctor::NewProcessLimits();
  const hostfacts::HostSnapshot snap = doctor::ReadDoctorSnapshot(*host);
  const doctor::DoctorInputs in{snap, *verbs, *rdma, *limits, Environment()};
  const std::vector<doctor::CheckResult> results = doctor::RunChecks(in);
  if (opts.json) {
    std::cout << DumpJson(doctor::ToJson(results), 2) << "\n";
  } else {
    if (opts.host_root != "/") {
      std::cout << "sysfs and /dev read under " << opts.host_root
                << "; libibverbs, RDMA netlink, limits and environment are this process's\n";
    }
    std::cout << doctor::FormatText(results);
  }
  return doctor::AnyFailed(results) ? 1 : 0;
}

}  // namespace hcashare::cli
