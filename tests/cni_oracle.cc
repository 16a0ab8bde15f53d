#include "tests/cni_oracle.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/unique_fd.h"

namespace hcashare::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Runs `ip`/`rdma` with JSON output in namespace `ns` ("" for ours); null when it failed.
json RunJson(const std::string& tool, const std::string& ns, std::vector<std::string> args) {
  std::vector<std::string> argv = {tool, "-j"};
  if (!ns.empty()) {
    argv.insert(argv.end(), {"-n", ns});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  auto out = Execute("/usr/sbin/" + tool, argv, {"PATH=/usr/sbin:/usr/bin"}, "",
                     std::chrono::milliseconds(10000));
  if (!out.ok() || out->exit_code != 0) return nullptr;
  if (out->out.find_first_not_of(" \n") == std::string::npos) return json::array();
  json j = json::parse(out->out, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

std::string Str(const json& o, const char* key) {
  if (!o.is_object() || !o.contains(key)) return "";
  const json& v = o[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

void AddLinks(const std::string& label, const std::string& ns,
              const std::set<std::string>& renumbered, Snapshot* snap) {
  const json links = RunJson("ip", ns, {"-d", "link", "show"});
  if (!links.is_array()) {
    (*snap)["ns " + label] = "absent";
    return;
  }
  for (const auto& l : links) {
    std::vector<std::string> flags = l.value("flags", std::vector<std::string>{});
    std::sort(flags.begin(), flags.end());
    std::ostringstream v;
    const std::string key = "ns " + label + " link " + l.value("ifname", "?");
    v << "ifindex=" << (renumbered.count(key) ? "(renumbered)" : Str(l, "ifindex"))
      << " mac=" << Str(l, "address") << " mtu=" << Str(l, "mtu") << " flags=";
    for (const auto& f : flags) v << f << ",";
    v << " operstate=" << Str(l, "operstate") << " master=" << Str(l, "master")
      << " qdisc=" << Str(l, "qdisc") << " txqlen=" << Str(l, "txqlen")
      << " alias=" << Str(l, "ifalias") << " promiscuity=" << Str(l, "promiscuity")
      << " allmulti=" << Str(l, "allmulti")
      << " kind=" << (l.contains("linkinfo") ? Str(l["linkinfo"], "info_kind") : "");
    (*snap)[key] = v.str();
    for (json vf : l.value("vfinfo_list", json::array())) {
      vf.erase("stats");
      (*snap)[key + " vf " + Str(vf, "vf")] = vf.dump();
    }
  }
}

void AddAddresses(const std::string& label, const std::string& ns, Snapshot* snap) {
  const json links = RunJson("ip", ns, {"addr", "show"});
  if (!links.is_array()) return;
  for (const auto& l : links) {
    for (const auto& a : l.value("addr_info", json::array())) {
      (*snap)["ns " + label + " addr " + l.value("ifname", "?") + " " + Str(a, "local") + "/" +
              Str(a, "prefixlen")] = "family=" + Str(a, "family") + " scope=" + Str(a, "scope");
    }
  }
}

void AddRoutes(const std::string& label, const std::string& ns, Snapshot* snap) {
  for (const char* family : {"-4", "-6"}) {
    const json routes = RunJson("ip", ns, {family, "route", "show", "table", "all"});
    if (!routes.is_array()) continue;
    for (json r : routes) {
      r.erase("expires");
      (*snap)["ns " + label + " route " + r.dump()] = "";
    }
  }
}

// The RDMA devices the namespace sees (`rdma` has no -n: run it through `ip netns exec`).
void AddRdma(const std::string& label, const std::string& ns, Snapshot* snap) {
  if (!fs::exists("/usr/sbin/rdma")) return;
  std::vector<std::string> argv = {"rdma", "-j", "dev", "show"};
  if (!ns.empty()) argv.insert(argv.begin(), {"ip", "netns", "exec", ns});
  auto out = Execute("/usr/sbin/" + argv.front(), argv, {"PATH=/usr/sbin:/usr/bin"}, "",
                     std::chrono::milliseconds(10000));
  if (!out.ok() || out->exit_code != 0) return;
  const json list = json::parse(out->out, nullptr, false);
  if (!list.is_array()) return;
  for (const auto& d : list) (*snap)["ns " + label + " rdma " + Str(d, "ifname")] = "";
}

bool Ignored(const std::string& name) {
  return name == "lock" || name.rfind("last_reserved_ip", 0) == 0;
}

// True when another process holds a flock on `path`.
bool LockHeld(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0;
}

void AddDir(const std::string& label, const std::string& dir, Snapshot* snap) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;  // as an empty directory: nothing in it
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), dir, ec).string();
    const std::string name = it->path().filename().string();
    if (Ignored(name)) continue;
    const std::string key = "dir " + label + " " + rel;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0) {
      if (LockHeld(it->path().string())) (*snap)[key] = "held";
      continue;
    }
    if (it->is_symlink(ec)) {
      (*snap)[key] = "-> " + fs::read_symlink(it->path(), ec).string();
    } else if (it->is_regular_file(ec)) {
      struct stat st {};
      ::lstat(it->path().c_str(), &st);
      std::ifstream in(it->path());
      std::stringstream content;
      content << in.rdbuf();
      std::ostringstream v;
      v << "mode=" << std::oct << (st.st_mode & 07777) << " " << content.str().substr(0, 65536);
      (*snap)[key] = v.str();
    }
  }
}

}  // namespace

Snapshot TakeSnapshot(const OracleScope& scope) {
  Snapshot snap;
  for (const auto& [label, ns] : scope.netns) {
    AddLinks(label, ns, scope.renumbered_links, &snap);
    if (snap.count("ns " + label) != 0) continue;  // absent
    AddAddresses(label, ns, &snap);
    AddRoutes(label, ns, &snap);
    AddRdma(label, ns, &snap);
  }
  for (const auto& [label, dir] : scope.dirs) AddDir(label, dir, &snap);
  return snap;
}

std::string DiffSnapshots(const Snapshot& before, const Snapshot& after) {
  std::ostringstream out;
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    if (it == after.end()) {
      out << "- " << key << ": " << value << "\n";
    } else if (it->second != value) {
      out << "- " << key << ": " << value << "\n+ " << key << ": " << it->second << "\n";
    }
  }
  for (const auto& [key, value] : after) {
    if (before.count(key) == 0) out << "+ " << key << ": " << value << "\n";
  }
  return out.str();
}

}  // namespace hcashare::testing
