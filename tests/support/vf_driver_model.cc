#include "tests/support/vf_driver_model.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cni/vf.h"
#include "common/atomic_file.h"
#include "common/process.h"

namespace hcashare::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Runs `ip` with `args` in the calling thread's namespace.
Status Ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto out = Execute("/usr/sbin/ip", argv, {"PATH=/usr/sbin:/usr/bin"}, "",
                     std::chrono::milliseconds(10000));
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) return Status::IoError("ip: " + out->err);
  return Status::Ok();
}

class VfDriverModel final : public cni::VfDriver {
 public:
  VfDriverModel(std::string table, std::string rdma, const Host& host,
                std::shared_ptr<ModelTree> tree)
      : table_(std::move(table)),
        rdma_(std::move(rdma)),
        host_(host),
        sysfs_(cni::NewSysfsVfDriver(host)),
        netdev_(NewNetlinkNetdevOps()) {
    tree->root = host.Resolve("/");
  }

  Result<std::string> BoundDriver(const std::string& pci) override {
    return sysfs_->BoundDriver(pci);
  }

  Status Unbind(const std::string& pci, const std::string& driver) override {
    RETURN_IF_ERROR(sysfs_->Unbind(pci, driver));  // the real (confined) write
    ASSIGN_OR_RETURN(const std::string bound, sysfs_->BoundDriver(pci));
    if (bound != driver) return ErrnoStatus(ENODEV, "unbind " + pci + " from " + driver);
    ASSIGN_OR_RETURN(const std::string dir, DeviceDir(pci));
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir + "/net", ec)) {
      const std::string name = e.path().filename().string();
      Status gone = netdev_->Delete(name);
      if (!gone.ok() && !gone.IsNotFound()) return gone;
      fs::remove(host_.Resolve("/sys/class/net/" + name), ec);
    }
    fs::remove_all(dir + "/net", ec);
    for (const auto& e : fs::directory_iterator(dir + "/infiniband", ec)) {
      const std::string name = e.path().filename().string();
      fs::remove(host_.Resolve("/sys/class/infiniband/" + name), ec);
      RETURN_IF_ERROR(SetRdma(name, false));
    }
    fs::remove_all(dir + "/infiniband", ec);
    fs::remove(dir + "/driver", ec);
    return Status::Ok();
  }

  Status Bind(const std::string& pci, const std::string& driver) override {
    RETURN_IF_ERROR(sysfs_->Bind(pci, driver));  // the real (confined) write
    ASSIGN_OR_RETURN(const std::string bound, sysfs_->BoundDriver(pci));
    if (!bound.empty()) return ErrnoStatus(EBUSY, "bind " + pci + " to " + driver);
    ASSIGN_OR_RETURN(const cni::VfDevice vf, ResolveUnbound(pci));
    ASSIGN_OR_RETURN(json table, LoadTestTable(table_));
    const std::string key = vf.pf_netdev + "/" + std::to_string(vf.vf_index);
    if (!table.contains(key)) return Status::NotFound("no VF " + key + " to bind");
    json& entry = table[key];
    if (int failures = entry.value("bindFailures", 0); failures > 0) {
      if (--failures == 0) {
        entry.erase("bindFailures");
      } else {
        entry["bindFailures"] = failures;
      }
      RETURN_IF_ERROR(WriteFileAtomically(table_, table.dump(1), 0644));
      return ErrnoStatus(EIO, "bind " + pci + " to " + driver + " (the model's probe failed)");
    }
    const std::pair<const char*, const char*> kApplied[] = {{"nodeGuid", "boundNodeGuid"},
                                                            {"portGuid", "boundPortGuid"}};
    for (const auto& [admin, applied] : kApplied) {
      if (entry.contains(admin)) entry[applied] = entry[admin];
    }
    RETURN_IF_ERROR(WriteFileAtomically(table_, table.dump(1), 0644));
    ASSIGN_OR_RETURN(const std::string dir, DeviceDir(pci));
    // The new netdev first, then its sysfs entries, then the driver link: a bind that fails
    // halfway leaves the VF unbound, as the kernel's failed probe does.
    const std::string name = FreeIbName();
    const std::string mac = ModelMacForGuid(entry.value("boundPortGuid", ""));
    Status made;
    for (int attempt = 0; attempt < 16; ++attempt) {
      made = Ip(ModelNetdevAddArgs(name, mac, attempt));
      if (made.ok()) break;
    }
    RETURN_IF_ERROR(made);
    std::error_code ec;
    const std::string ndir = dir + "/net/" + name;
    fs::create_directories(ndir, ec);
    std::ofstream(ndir + "/type") << "32\n";
    std::ofstream(ndir + "/operstate") << "down\n";
    fs::create_symlink(fs::relative(ndir, host_.Resolve("/sys/class/net")),
                       host_.Resolve("/sys/class/net/" + name), ec);
    fs::create_symlink(fs::relative(dir, ndir), ndir + "/device", ec);
    if (ec) return Status::IoError("add netdev " + name + " of " + pci + ": " + ec.message());
    if (entry.value("rdma", false)) RETURN_IF_ERROR(AddRdma(dir));
    fs::create_symlink(fs::relative(host_.Resolve("/sys/bus/pci/drivers/" + driver), dir),
                       dir + "/driver", ec);
    if (ec) return Status::IoError("link the driver of " + pci + ": " + ec.message());
    return Status::Ok();
  }

 private:
  // A new RDMA device of the VF at `dir` under the kernel's kind of name (mlx5_<lowest
  // free>), in the tree and, in the calling thread's namespace, in the RDMA file.
  Status AddRdma(const std::string& dir) {
    std::string name;
    for (int n = 0; name.empty(); ++n) {
      const std::string candidate = "mlx5_" + std::to_string(n);
      if (!host_.Exists("/sys/class/infiniband/" + candidate)) name = candidate;
    }
    const std::string idir = dir + "/infiniband/" + name;
    std::error_code ec;
    fs::create_directories(idir + "/ports/1", ec);
    std::ofstream(idir + "/node_type") << "1: CA\n";
    std::ofstream(idir + "/ports/1/link_layer") << "InfiniBand\n";
    std::ofstream(idir + "/ports/1/state") << "4: ACTIVE\n";
    fs::create_symlink(fs::relative(idir, host_.Resolve("/sys/class/infiniband")),
                       host_.Resolve("/sys/class/infiniband/" + name), ec);
    if (ec) return Status::IoError("add RDMA device " + name + ": " + ec.message());
    return SetRdma(name, true);
  }
  // Adds RDMA device `name` to the RDMA file in this thread's namespace, or removes it.
  Status SetRdma(const std::string& name, bool present) {
    if (rdma_.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(json j, LoadTestTable(rdma_));
    if (present) {
      struct stat here {};
      if (::stat("/proc/thread-self/ns/net", &here) != 0) return ErrnoStatus(errno, "stat netns");
      j["devices"][name] = static_cast<uint64_t>(here.st_ino);
    } else if (j.contains("devices")) {
      j["devices"].erase(name);
    }
    return WriteFileAtomically(rdma_, j.dump(1), 0644);
  }
  Result<std::string> DeviceDir(const std::string& pci) {
    std::error_code ec;
    const fs::path dir = fs::canonical(host_.Resolve("/sys/bus/pci/devices/" + pci), ec);
    if (ec) return Status::NotFound("no PCI device " + pci + " in the tree");
    return dir.string();
  }
  // The VF's PF netdev and index, read while it is unbound (ResolveVf wants a driver).
  Result<cni::VfDevice> ResolveUnbound(const std::string& pci) {
    cni::VfDevice vf;
    ASSIGN_OR_RETURN(const std::string physfn,
                     host_.ReadLink("/sys/bus/pci/devices/" + pci + "/physfn"));
    const std::string pf = BaseName(physfn);
    auto pf_netdevs = host_.ListDir("/sys/bus/pci/devices/" + pf + "/net");
    if (!pf_netdevs.ok() || pf_netdevs->empty()) return Status::NotFound(pf + " has no netdev");
    vf.pf_netdev = pf_netdevs->front();
    ASSIGN_OR_RETURN(const std::vector<std::string> entries,
                     host_.ListDir("/sys/bus/pci/devices/" + pf));
    for (const auto& e : entries) {
      if (e.rfind("virtfn", 0) != 0) continue;
      auto target = host_.ReadLink("/sys/bus/pci/devices/" + pf + "/" + e);
      if (target.ok() && BaseName(*target) == pci) vf.vf_index = std::stoi(e.substr(6));
    }
    if (vf.vf_index < 0) return Status::NotFound(pci + " is not a VF of " + pf);
    return vf;
  }
  // ib<N> for the lowest N that neither the tree nor the namespace uses.
  std::string FreeIbName() {
    for (int n = 0;; ++n) {
      const std::string name = "ib" + std::to_string(n);
      if (!host_.Exists("/sys/class/net/" + name) && !netdev_->Get(name).ok()) return name;
    }
  }

  std::string table_;
  std::string rdma_;  // the RDMA file of file_backends.h ("" for none)
  const Host& host_;
  std::unique_ptr<cni::VfDriver> sysfs_;
  std::unique_ptr<NetdevOps> netdev_;
};

class TreeMirroringNetdevOps final : public NetdevOps {
 public:
  TreeMirroringNetdevOps(std::unique_ptr<NetdevOps> inner, std::shared_ptr<ModelTree> tree)
      : inner_(std::move(inner)), tree_(std::move(tree)) {}

  Status Rename(const std::string& name, const std::string& new_name) override {
    RETURN_IF_ERROR(inner_->Rename(name, new_name));
    if (tree_->root.empty()) return Status::Ok();
    const fs::path link = tree_->root + "/sys/class/net/" + name;
    std::error_code ec;
    const fs::path ndir = fs::canonical(link, ec);
    if (ec) return Status::Ok();  // not a device of the tree
    const fs::path moved = ndir.parent_path() / new_name;
    fs::rename(ndir, moved, ec);
    fs::remove(link, ec);
    const fs::path new_link = tree_->root + "/sys/class/net/" + new_name;
    fs::create_symlink(fs::relative(moved, new_link.parent_path()), new_link, ec);
    return Status::Ok();
  }

  Result<LinkState> Get(const std::string& name) override { return inner_->Get(name); }
  Status MoveToNetns(const std::string& name, const Netns& target) override {
    return inner_->MoveToNetns(name, target);
  }
  Status MoveAndChange(int ifindex, const Netns& target, const LinkChanges& changes) override {
    return inner_->MoveAndChange(ifindex, target, changes);
  }
  Result<std::vector<LinkState>> List() override { return inner_->List(); }
  Status SetMac(const std::string& name, const std::string& mac) override {
    return inner_->SetMac(name, mac);
  }
  Status SetMtu(const std::string& name, uint32_t mtu) override {
    return inner_->SetMtu(name, mtu);
  }
  Status SetUp(const std::string& name, bool up) override { return inner_->SetUp(name, up); }
  Status CreateMacvlan(const std::string& master, const std::string& name,
                       const Netns& target) override {
    return inner_->CreateMacvlan(master, name, target);
  }
  Status CreateIpoibChild(const std::string& parent, const std::string& name, uint16_t pkey,
                          const Netns& target) override {
    return inner_->CreateIpoibChild(parent, name, pkey, target);
  }
  Status Delete(const std::string& name) override { return inner_->Delete(name); }
  Result<std::vector<std::string>> ListAddresses(const std::string& name) override {
    return inner_->ListAddresses(name);
  }
  Status AddAddress(const std::string& name, const std::string& cidr) override {
    return inner_->AddAddress(name, cidr);
  }
  Status AddRoute(const std::string& name, const std::string& dst,
                  const std::string& gateway) override {
    return inner_->AddRoute(name, dst, gateway);
  }

 private:
  std::unique_ptr<NetdevOps> inner_;
  std::shared_ptr<ModelTree> tree_;
};

}  // namespace

Result<json> LoadTestTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("no test table " + path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::IoError(path + " is not a JSON object");
  return j;
}

std::unique_ptr<cni::VfDriver> NewVfDriverModel(std::string table, std::string rdma,
                                                const Host& host, std::shared_ptr<ModelTree> tree) {
  return std::make_unique<VfDriverModel>(std::move(table), std::move(rdma), host, std::move(tree));
}

std::unique_ptr<NetdevOps> NewTreeMirroringNetdevOps(std::unique_ptr<NetdevOps> inner,
                                                     std::shared_ptr<ModelTree> tree) {
  return std::make_unique<TreeMirroringNetdevOps>(std::move(inner), std::move(tree));
}

}  // namespace hcashare::testing
