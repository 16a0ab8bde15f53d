// hcashare: operator tools for the hcashare RDMA device plugin and CNI.
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/version.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"hcashare: RDMA for Kubernetes pods — operator tools"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");

  std::string file;
  bool validate_json = false;
  auto* validate = app.add_subcommand("validate", "check a device-plugin config file");
  validate->add_option("file", file, "config file (JSON or YAML)")->required();
  validate->add_flag("--json", validate_json, "print the report as JSON");

  hcashare::cli::DemoOptions demo_opts;
  auto* demo = app.add_subcommand("demo", "run the device plugin on a simulated node");
  demo->add_option("--plugin", demo_opts.plugin_binary, "path of hcashare-device-plugin");
  demo->add_flag("--keep", demo_opts.keep, "keep the simulated node's directory");
  demo->add_flag("--json", demo_opts.json, "print the summary as JSON");

  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::cout << "hcashare " << hcashare::VersionString() << "\n";
    return 0;
  }
  if (*validate) return hcashare::cli::RunValidate(file, validate_json);
  if (*demo) return hcashare::cli::RunDemo(demo_opts);
  std::cout << app.help();
  return 0;
}
