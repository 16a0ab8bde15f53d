// The state-diff oracle for the CNI failure-path tests: a snapshot of everything a CNI
// invocation could change that someone can observe, taken with the real tools (iproute2's
// JSON output, the file system), and a readable diff of two snapshots.
//
// What a snapshot holds, per network namespace it is given:
//   - every link: name, ifindex, MAC, MTU, flags, operstate, master, kind, and a PF's VF
//     table (MAC, vlan, qos, vlan protocol, spoofchk, trust, link_state, rates) where the
//     kernel reports one;
//   - every address (family, local, prefix length, scope) and every route of every table;
//   - the RDMA devices the namespace sees, when the `rdma` tool is installed;
// and per directory it is given (the plugin's state dir, the IPAM store, the device-info
// dir): every regular file with its mode and content, every symlink with its target, and
// every `*.lock` file that another process holds a flock on (an unheld lock file means
// nothing: a flock dies with its holder).
//
// Left out, each on purpose: empty directories (a state dir's layout, created once and
// owned by the installation); host-local's allocation cursor (`last_reserved_ip.*`) and
// lock file (host-local's, not a lease); link_netnsid (an id the kernel assigns on first
// observation); address lifetimes and DAD flags (timers, not configuration); the ifindex
// of the links the scope names as renumbered (a rebound VF's netdev).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace hcashare::testing {

// One observable fact per key ("ns host link eth0" -> "ifindex=2 mac=... up ...").
using Snapshot = std::map<std::string, std::string>;

// What to snapshot: namespaces by label -> `ip netns` name ("" for the caller's own), and
// directories by label -> path.
struct OracleScope {
  std::map<std::string, std::string> netns;
  std::map<std::string, std::string> dirs;
  // Links ("ns <label> link <name>") whose ifindex is left out: a VF's netdev that a driver
  // rebind destroys and creates again, which the kernel numbers anew (its name, MAC and
  // every other fact still count).
  std::set<std::string> renumbered_links;
};

// Takes a snapshot of `scope`. A namespace that does not exist (a deleted pod) is
// recorded as absent; a directory that does not exist holds nothing.
Snapshot TakeSnapshot(const OracleScope& scope);

// "" when equal; otherwise one line per difference ("- key: before", "+ key: after").
std::string DiffSnapshots(const Snapshot& before, const Snapshot& after);

}  // namespace hcashare::testing
