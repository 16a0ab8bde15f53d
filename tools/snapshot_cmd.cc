// `hcashare snapshot`: the node's host snapshot as JSON, for a bug report or for checking a
// config on another machine (`discover --snapshot`, `validate --against`).
#include <iostream>

#include "common/atomic_file.h"
#include "hostfacts/snapshot_json.h"
#include "json/dump.h"
#include "tools/commands.h"
#include "tools/snapshot_source.h"

namespace hcashare::cli {

int RunSnapshot(const SnapshotOptions& opts) {
  hostfacts::ReadOptions read;
  read.gid_tables = true;
  read.verbs_owners = true;
  auto snap = SnapshotFor(opts.host_root, "", read);
  if (!snap.ok()) {
    std::cerr << "hcashare snapshot: " << snap.status().message() << "\n";
    return 1;
  }
  const std::string text = DumpJson(hostfacts::SnapshotToJson(*snap), 1) + "\n";
  if (opts.output.empty()) {
    std::cout << text;
    return std::cout.good() ? 0 : 1;
  }
  if (Status s = WriteFileAtomically(opts.output, text); !s.ok()) {
    std::cerr << "hcashare snapshot: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace hcashare::cli
