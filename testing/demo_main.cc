// hcashare-demo: the demo's own binary, so that the shipping `hcashare` CLI links no fake.
// `hcashare demo ARGS...` runs this binary (from its own directory) with the same ARGS.
#include <CLI/CLI.hpp>

#include "testing/demo.h"

int main(int argc, char** argv) {
  hcashare::fake::DemoOptions opts;
  CLI::App app{"hcashare demo: run the device plugin on a simulated node"};
  app.name("hcashare demo");
  app.add_option("--plugin", opts.plugin_binary, "path of hcashare-device-plugin");
  app.add_flag("--keep", opts.keep, "keep the simulated node's directory");
  app.add_flag("--json", opts.json, "print the summary as JSON");
  CLI11_PARSE(app, argc, argv);
  return hcashare::fake::RunDemo(opts);
}
