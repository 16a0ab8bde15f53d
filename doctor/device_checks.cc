// The device checks: uverbs nodes, libibverbs, opening devices and their ports, RoCE GIDs.
#include <algorithm>

#include "common/strings.h"
#include "doctor/check_util.h"
#include "doctor/rdma_sysfs.h"

namespace hcashare::doctor {
namespace {

constexpr const char* kFixLibibverbs = "fix the libibverbs check first";

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// "uverbs0 (mlx5_0), uverbs1 (mlx5_1)".
std::string DescribeUverbs(const std::vector<std::string>& nodes,
                           const std::map<std::string, std::string>& owners) {
  std::vector<std::string> parts;
  for (const auto& n : nodes) {
    auto it = owners.find(n);
    parts.push_back(it == owners.end() ? n : n + " (" + it->second + ")");
  }
  return Join(parts, ", ");
}

// Why one device's ports are not all usable ("" when they are); `usable` says whether at
// least one port is.
std::string PortProblems(const std::string& dev, const std::vector<VerbsPort>& ports,
                         bool* usable) {
  std::vector<std::string> problems;
  *usable = false;
  for (const auto& p : ports) {
    const bool layer_ok = p.link_layer == "InfiniBand" || p.link_layer == "Ethernet";
    if (p.state == "ACTIVE" && layer_ok) {
      *usable = true;
      continue;
    }
    problems.push_back(dev + " port " + std::to_string(p.number) + " is " + p.state +
                       (layer_ok ? "" : " with link layer \"" + p.link_layer + "\""));
  }
  if (ports.empty()) problems.push_back(dev + " has no ports");
  return Join(problems, "; ");
}

}  // namespace

CheckResult CheckUverbsNodes(const DoctorInputs& in) {
  const std::vector<std::string> entries = DevInfinibandEntries(in.snap);
  std::vector<std::string> uverbs;
  for (const auto& e : entries) {
    if (StartsWith(e, "uverbs")) uverbs.push_back(e);
  }
  if (uverbs.empty()) {
    return Fail("uverbs",
                "no /dev/infiniband/uverbs* device nodes: no RDMA device can be opened, so NCCL "
                "falls back to sockets",
                "in a pod, request an RDMA resource (resources.limits, e.g. "
                "rdma/hca_shared_devices_a: 1); on a node, load ib_uverbs (modprobe ib_uverbs)");
  }
  const std::string have = DescribeUverbs(uverbs, UverbsOwners(in.snap));
  if (std::find(entries.begin(), entries.end(), "rdma_cm") == entries.end()) {
    return Warn("uverbs", have + " present, but /dev/infiniband/rdma_cm is missing",
                "RDMA CM users (UCX, MPI, NVMe-oF) need it: load rdma_ucm (modprobe rdma_ucm)");
  }
  return Pass("uverbs", have + " and rdma_cm present");
}

CheckResult CheckLibibverbs(const DoctorInputs& in) {
  if (Status st = in.verbs.Load(); !st.ok()) {
    return Fail("libibverbs", st.message() + "; NCCL will use NET/Socket",
                "install rdma-core's libibverbs and the HCA's provider in the image (Debian/"
                "Ubuntu: libibverbs1 ibverbs-providers; RHEL: libibverbs)");
  }
  auto devices = in.verbs.ListDevices();
  if (!devices.ok()) {
    const bool enosys = devices.status().message().find("not implemented") != std::string::npos;
    return Fail(
        "libibverbs",
        "libibverbs loaded, but " + devices.status().message() + "; NCCL will use NET/Socket",
        enosys ? "the kernel offers no RDMA here (ENOSYS): load the HCA's RDMA driver "
                 "(e.g. mlx5_ib) and ib_uverbs on the node"
               : "run ibv_devices to reproduce; check /dev/infiniband and the providers");
  }
  if (devices->empty()) {
    return Fail("libibverbs",
                "libibverbs loaded, but ibv_get_device_list found no RDMA devices; NCCL will "
                "use NET/Socket",
                "make /dev/infiniband/uverbs* visible (see the uverbs check) and install the "
                "HCA's verbs provider (e.g. libmlx5 from ibverbs-providers)");
  }
  return Pass("libibverbs", "libibverbs loaded; ibv_get_device_list: " + Join(*devices, ", "));
}

CheckResult CheckVerbsPorts(const DoctorInputs& in) {
  auto devices = in.verbs.ListDevices();
  if (!devices.ok() || devices->empty()) {
    return Fail(
        "verbs-ports",
        "no RDMA device to open: " + (devices.ok() ? std::string("ibv_get_device_list is empty")
                                                   : devices.status().message()),
        kFixLibibverbs);
  }
  std::vector<std::string> failed;
  std::vector<std::string> degraded;
  std::vector<std::string> good;
  for (const auto& dev : *devices) {
    auto ports = in.verbs.QueryPorts(dev);
    if (!ports.ok()) {
      failed.push_back(ports.status().message());
      continue;
    }
    bool usable = false;
    const std::string problems = PortProblems(dev, *ports, &usable);
    if (!usable) {
      failed.push_back(problems);
    } else if (!problems.empty()) {
      degraded.push_back(problems);
    }
    for (const auto& p : *ports) {
      if (p.state == "ACTIVE") {
        good.push_back(dev + " port " + std::to_string(p.number) + " ACTIVE " + p.link_layer);
      }
    }
  }
  const std::string fix =
      "InfiniBand: check the cable and that a subnet manager runs (ibstat); Ethernet: check "
      "the netdev's link (ip link); an open error: the uverbs node must be readable and "
      "writable";
  if (!failed.empty()) return Fail("verbs-ports", Join(failed, "; "), fix);
  if (!degraded.empty()) {
    return Warn("verbs-ports", Join(degraded, "; ") + " (usable: " + Join(good, ", ") + ")", fix);
  }
  return Pass("verbs-ports", Join(good, ", "));
}

CheckResult CheckRoceGid(const DoctorInputs& in) {
  const std::vector<RdmaDevice> devices = ListRdmaDevices(in.snap);
  if (devices.empty()) {
    return Fail("roce-gid", "no RDMA devices in /sys/class/infiniband",
                "load the RDMA driver (e.g. mlx5_ib) on the node; with RDMA netns mode "
                "exclusive the device must be moved into this network namespace");
  }
  std::vector<std::string> missing;
  std::vector<std::string> found;
  for (const auto& dev : devices) {
    for (const auto& port : dev.ports) {
      if (port.link_layer != "Ethernet") continue;
      const std::string where = dev.name + " port " + port.number;
      const std::vector<GidEntry> table = ReadGidTable(in.snap, dev.name, port.number);
      const GidEntry* pick = nullptr;
      for (const auto& g : table) {
        if (g.type != "RoCE v2") continue;
        // Prefer an IPv4-mapped GID, as NCCL does by default (NCCL_IB_ADDR_FAMILY=AF_INET).
        if (pick == nullptr || (IsIpv4MappedGid(g.gid) && !IsIpv4MappedGid(pick->gid))) {
          pick = &g;
        }
        if (IsIpv4MappedGid(pick->gid)) break;
      }
      if (pick == nullptr) {
        missing.push_back(where + " has no RoCE v2 GID");
      } else {
        found.push_back(where + " GID index " + std::to_string(pick->index) + " (" + pick->gid +
                        (pick->ndev.empty() ? "" : " on " + pick->ndev) + ")");
      }
    }
  }
  if (!missing.empty()) {
    return Fail("roce-gid", Join(missing, "; "),
                "RoCE v2 GIDs come from the netdev's IP addresses: give the netdev an address, "
                "and check the RoCE mode (cma_roce_mode)");
  }
  if (found.empty()) return Pass("roce-gid", "no RoCE ports (InfiniBand only): no GID needed");
  return Pass("roce-gid", "RoCE v2: " + Join(found, ", "));
}

}  // namespace hcashare::doctor
