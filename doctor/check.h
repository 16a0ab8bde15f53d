// Doctor checks: will RDMA (and NCCL's IB transport) work from here? Each check looks at
// one thing and returns PASS, WARN or FAIL with a one-line reason and, unless it passed,
// a fix hint. Checks only read; they are independent and run in a fixed order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "doctor/limits.h"
#include "doctor/verbs.h"
#include "hostfacts/facts.h"
#include "nl/rdma_netlink.h"

namespace hcashare::doctor {

enum class Verdict { kPass, kWarn, kFail };

// "PASS", "WARN" or "FAIL".
const char* VerdictName(Verdict v);

// The outcome of one check.
struct CheckResult {
  std::string name;  // stable id, e.g. "libibverbs"
  Verdict verdict = Verdict::kPass;
  std::string reason;  // one line
  std::string fix;     // one line; "" when passed
  std::string device;  // the PCI address a per-device result is about; "" otherwise
};

// Everything a check may look at. All references must outlive the checks. `snap` is what
// /sys and /dev say (possibly under --host-root; ReadDoctorSnapshot); `verbs`, `rdma` and
// `limits` are this process's; `env` is the environment to judge (a map, never getenv()).
struct DoctorInputs {
  const hostfacts::HostSnapshot& snap;
  Verbs& verbs;
  RdmaSystem& rdma;
  const ProcessLimits& limits;
  std::map<std::string, std::string> env;
};

// Below this RLIMIT_MEMLOCK (without CAP_IPC_LOCK) memlock FAILs; at or above it WARNs.
// NCCL pins NCCL_BUFFSIZE (4 MiB) per channel and peer: hundreds of MiB on a GPU node.
inline constexpr uint64_t kMemlockFailBelow = uint64_t{1} << 30;

// The checks, in the order RunChecks runs them.
CheckResult CheckUverbsNodes(const DoctorInputs& in);  // "uverbs"
CheckResult CheckLibibverbs(const DoctorInputs& in);   // "libibverbs"
CheckResult CheckVerbsPorts(const DoctorInputs& in);   // "verbs-ports"
CheckResult CheckRoceGid(const DoctorInputs& in);      // "roce-gid"
CheckResult CheckMemlock(const DoctorInputs& in);      // "memlock"
CheckResult CheckRdmaNetns(const DoctorInputs& in);    // "rdma-netns"
// Whether the container runtime's config (under --host-root) gives containers CDI devices,
// which DRA claims (and --use-cdi) need. PASS when no runtime config is there to read.
CheckResult CheckRuntimeCdi(const DoctorInputs& in);     // "runtime-cdi"
CheckResult CheckNcclIbDisable(const DoctorInputs& in);  // "nccl-ib-disable"
CheckResult CheckNcclNet(const DoctorInputs& in);        // "nccl-net"
CheckResult CheckNcclIbHca(const DoctorInputs& in);      // "nccl-ib-hca"
CheckResult CheckPluginEnv(const DoctorInputs& in);      // "plugin-env"
// The GPU <-> NIC fast path (doctor/gpu_path_checks.cc). One "pcie-link" WARN per GPU or
// NIC trained below its attainable PCIe width or speed (`device` set), else one PASS.
std::vector<CheckResult> CheckPcieLinks(const DoctorInputs& in);
CheckResult CheckGpuDirect(const DoctorInputs& in);  // "gpudirect-rdma": peermem or dma-buf
CheckResult CheckIommu(const DoctorInputs& in);      // "iommu": RDMA devices in DMA domains
// One "acs" WARN per PCIe switch port that redirects P2P between a GPU and an RDMA NIC under
// it to the root complex (`device` set); a PASS saying which bridges' ACS is unknown (it
// needs CAP_SYS_ADMIN); else one PASS.
std::vector<CheckResult> CheckAcs(const DoctorInputs& in);

// Runs every check above, in order.
std::vector<CheckResult> RunChecks(const DoctorInputs& in);

// True when any result is FAIL.
bool AnyFailed(const std::vector<CheckResult>& results);

}  // namespace hcashare::doctor
