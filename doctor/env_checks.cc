// The environment checks: NCCL's knobs and the device plugin's Allocate environment.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "common/env_names.h"
#include "common/strings.h"
#include "doctor/check_util.h"
#include "doctor/nccl_env.h"
#include "doctor/rdma_sysfs.h"

namespace hcashare::doctor {
namespace {

constexpr const char* kPciDeviceEnvPrefix = "PCIDEVICE_";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The PCIDEVICE_<RESOURCE> variables (not their _INFO companions).
std::map<std::string, std::string> PciDeviceVars(const DoctorInputs& in) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : in.env) {
    const bool info = k.size() > 5 && k.compare(k.size() - 5, 5, "_INFO") == 0;
    if (k.rfind(kPciDeviceEnvPrefix, 0) == 0 && !info) out[k] = v;
  }
  return out;
}

// HCASHARE_RDMA_DEVICES_<resource> (each resource's own) and the generic
// HCASHARE_RDMA_DEVICES of earlier releases, by name.
std::map<std::string, std::string> RdmaDeviceVars(const DoctorInputs& in) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : in.env) {
    if (IsRdmaDevicesEnvName(k)) out[k] = v;
  }
  return out;
}

// Every RDMA device the plugin's variables name, each once, in name order of the variables.
std::vector<std::string> GrantedRdmaNames(const DoctorInputs& in) {
  std::vector<std::string> out;
  for (const auto& [var, value] : RdmaDeviceVars(in)) {
    for (auto& n : SplitList(value)) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
    }
  }
  return out;
}

// Problems with one HCASHARE_RDMA_DEVICES* variable: names not in sysfs or without a
// uverbs node.
void CheckRdmaNames(const DoctorInputs& in, const std::string& var,
                    const std::vector<std::string>& names, std::vector<std::string>* problems) {
  std::set<std::string> visible;
  for (const auto& d : ListRdmaDevices(in.snap)) visible.insert(d.name);
  std::map<std::string, std::string> uverbs_of;
  for (const auto& [node, ibdev] : UverbsOwners(in.snap)) uverbs_of[ibdev] = node;
  for (const auto& n : names) {
    if (!visible.count(n)) {
      problems->push_back(var + " names " + n + ", which is not in /sys/class/infiniband");
    } else if (!uverbs_of.count(n) || !HasDevNode(in.snap, uverbs_of[n])) {
      problems->push_back(n + " has no uverbs node in /dev/infiniband");
    }
  }
}

// The variable that names the RDMA devices of PCIDEVICE_<S>'s resource: its own
// HCASHARE_RDMA_DEVICES_<S> (S with '-' as '_'), else the generic one, else "" (unset).
std::string RdmaVarOf(const std::string& pci_var, const std::map<std::string, std::string>& rdma) {
  const std::string own =
      RdmaDevicesEnvName(std::string_view(pci_var).substr(std::string(kPciDeviceEnvPrefix).size()));
  if (rdma.count(own)) return own;
  return rdma.count(kRdmaDevicesEnv) ? kRdmaDevicesEnv : "";
}

// Problems with one PCIDEVICE_* variable: addresses that are absent, and RDMA devices of
// granted functions that the resource's HCASHARE_RDMA_DEVICES* variable (when set) does
// not name.
void CheckPciVar(const DoctorInputs& in, const std::string& var, const std::string& value,
                 const std::map<std::string, std::string>& rdma,
                 std::vector<std::string>* problems) {
  const std::string rdma_var = RdmaVarOf(var, rdma);
  const std::vector<std::string> rdma_names =
      rdma_var.empty() ? std::vector<std::string>{} : SplitList(rdma.at(rdma_var));
  for (const auto& addr : SplitList(value)) {
    const hostfacts::PciFunction* fn = in.snap.FindPci(addr);
    if (fn == nullptr) {
      problems->push_back(var + " names " + addr + ", which is not in /sys/bus/pci/devices");
      continue;
    }
    if (rdma_names.empty()) continue;
    for (const auto& r : fn->rdma_devices) {
      if (std::find(rdma_names.begin(), rdma_names.end(), r) == rdma_names.end()) {
        problems->push_back(var + " grants " + addr + " (" + r + "), but " + rdma_var +
                            " does not name " + r);
      }
    }
  }
}

// The advice for an NCCL_IB_HCA that misses devices: compose it from every resource's
// variable (docs/device-plugin.md, "What a pod gets").
constexpr const char* kNcclIbHcaFix =
    "compose it from every resource's devices in the container's command: "
    "NCCL_IB_HCA==$(env | sed -n 's/^HCASHARE_RDMA_DEVICES_[A-Z0-9_]*=//p' | paste -sd, -)";

}  // namespace

CheckResult CheckNcclIbDisable(const DoctorInputs& in) {
  const std::string v = EnvOr(in, "NCCL_IB_DISABLE");
  if (!v.empty() && std::atoi(v.c_str()) != 0) {
    return Warn("nccl-ib-disable",
                "NCCL_IB_DISABLE=" + v +
                    ": NCCL will not use InfiniBand/RoCE and falls back "
                    "to sockets",
                "unset NCCL_IB_DISABLE (or set it to 0)");
  }
  return Pass("nccl-ib-disable",
              v.empty() ? "NCCL_IB_DISABLE is not set" : "NCCL_IB_DISABLE=" + v + " (IB enabled)");
}

CheckResult CheckNcclNet(const DoctorInputs& in) {
  const std::string v = EnvOr(in, "NCCL_NET");
  if (Lower(v) == "socket") {
    return Warn("nccl-net", "NCCL_NET=" + v + " forces NCCL's TCP socket transport",
                "unset NCCL_NET, or set NCCL_NET=IB");
  }
  if (v.empty()) return Pass("nccl-net", "NCCL_NET is not set: NCCL picks IB when it can");
  return Pass("nccl-net", "NCCL_NET=" + v);
}

CheckResult CheckNcclIbHca(const DoctorInputs& in) {
  const std::string v = EnvOr(in, "NCCL_IB_HCA");
  if (v.empty()) return Pass("nccl-ib-hca", "NCCL_IB_HCA is not set: NCCL uses every RDMA device");
  const NcclHcaFilter filter = ParseNcclIbHca(v);
  std::vector<NcclPortRef> present;
  std::vector<std::string> present_names;
  for (const auto& d : ListRdmaDevices(in.snap)) {
    present_names.push_back(d.name);
    for (const auto& p : d.ports) present.push_back({d.name, std::atoi(p.number.c_str())});
  }
  const std::string have = present_names.empty() ? "none" : Join(present_names, ", ");
  const std::vector<NcclPortRef> selected = SelectPorts(filter, present);
  if (!filter.exclude) {
    std::vector<std::string> absent = UnmatchedEntries(filter, present);
    if (!absent.empty()) {
      return Warn("nccl-ib-hca",
                  "NCCL_IB_HCA=" + v + " names " + Join(absent, ", ") +
                      ", not present (present: " + have + ")" +
                      (selected.empty() ? "; NCCL finds no IB device and uses sockets" : ""),
                  kNcclIbHcaFix);
    }
  } else if (selected.empty()) {
    return Warn("nccl-ib-hca",
                "NCCL_IB_HCA=" + v + " excludes every RDMA device (present: " + have +
                    "); NCCL uses sockets",
                kNcclIbHcaFix);
  }
  // A device the plugin granted (any resource) that the filter leaves out is not used.
  std::vector<std::string> ignored;
  for (const auto& g : GrantedRdmaNames(in)) {
    const bool used = std::any_of(selected.begin(), selected.end(),
                                  [&](const NcclPortRef& p) { return p.device == g; });
    const bool visible =
        std::find(present_names.begin(), present_names.end(), g) != present_names.end();
    if (!used && visible) ignored.push_back(g);
  }
  if (!ignored.empty()) {
    return Warn("nccl-ib-hca",
                "NCCL_IB_HCA=" + v + " leaves out " + Join(ignored, ", ") +
                    ", granted to this container (HCASHARE_RDMA_DEVICES_*): NCCL does not use it",
                kNcclIbHcaFix);
  }
  std::vector<std::string> names;
  for (const auto& p : selected) names.push_back(p.device + ":" + std::to_string(p.port));
  return Pass("nccl-ib-hca", "NCCL_IB_HCA=" + v + " selects " + Join(names, ", "));
}

CheckResult CheckPluginEnv(const DoctorInputs& in) {
  const std::map<std::string, std::string> rdma = RdmaDeviceVars(in);
  const std::map<std::string, std::string> pci = PciDeviceVars(in);
  if (rdma.empty() && pci.empty()) {
    return Warn("plugin-env",
                "neither HCASHARE_RDMA_DEVICES_* nor PCIDEVICE_* is set: no hcashare "
                "resource was allocated to this container (expected on a node)",
                "in a pod, request the resource in resources.limits (e.g. "
                "rdma/hca_shared_devices_a: 1)");
  }
  std::vector<std::string> problems;
  for (const auto& [var, value] : rdma) CheckRdmaNames(in, var, SplitList(value), &problems);
  for (const auto& [var, value] : pci) CheckPciVar(in, var, value, rdma, &problems);
  if (!problems.empty()) {
    return Fail("plugin-env", Join(problems, "; "),
                "the device plugin granted devices this container cannot see: check that "
                "/dev/infiniband is not replaced by a volume and, for exclusive pools, that "
                "the CNI moved the RDMA device into the pod");
  }
  std::vector<std::string> ok;
  for (const auto& [var, value] : rdma) ok.push_back(var + "=" + value);
  for (const auto& [var, value] : pci) ok.push_back(var + "=" + value);
  return Pass("plugin-env", Join(ok, ", ") + ": all visible");
}

}  // namespace hcashare::doctor
