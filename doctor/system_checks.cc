// The process, kernel and node checks: RLIMIT_MEMLOCK, the RDMA netns mode, the container
// runtime's CDI support.
#include <iterator>

#include "common/strings.h"
#include "doctor/check_util.h"
#include "doctor/rdma_sysfs.h"

namespace hcashare::doctor {
namespace {

// "64 KiB", "8 MiB", "1.5 GiB"-style sizes (rounded down to one decimal).
std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  uint64_t tenths = bytes * 10;
  while (u + 1 < std::size(units) && bytes >= 1024) {
    tenths = bytes * 10 / 1024;
    bytes /= 1024;
    ++u;
  }
  std::string s = std::to_string(tenths / 10);
  if (tenths % 10 != 0 && u > 0) s += "." + std::to_string(tenths % 10);
  return s + " " + units[u];
}

}  // namespace

CheckResult CheckMemlock(const DoctorInputs& in) {
  auto limit = in.limits.MemlockBytes();
  const std::string text = !limit.ok()            ? "unreadable (" + limit.status().message() + ")"
                           : *limit == kUnlimited ? std::string("unlimited")
                                                  : HumanBytes(*limit);
  if (in.limits.HasIpcLock()) {
    return Pass("memlock",
                "CAP_IPC_LOCK is effective, so RDMA registrations ignore "
                "RLIMIT_MEMLOCK (" +
                    text + ")");
  }
  const std::string fix =
      "add IPC_LOCK to the container (securityContext.capabilities.add: [IPC_LOCK]) or raise "
      "the limit to unlimited (LimitMEMLOCK=infinity in the container runtime's systemd unit; "
      "docker: --ulimit memlock=-1)";
  if (!limit.ok()) return Warn("memlock", "RLIMIT_MEMLOCK is " + text, fix);
  if (*limit == kUnlimited) return Pass("memlock", "RLIMIT_MEMLOCK is unlimited");
  if (*limit < kMemlockFailBelow) {
    return Fail("memlock",
                "RLIMIT_MEMLOCK is " + text +
                    " without CAP_IPC_LOCK: memory registration "
                    "(ibv_reg_mr) will fail once more is pinned",
                fix);
  }
  return Warn("memlock",
              "RLIMIT_MEMLOCK is " + text + " without CAP_IPC_LOCK: large jobs may pin more", fix);
}

CheckResult CheckRdmaNetns(const DoctorInputs& in) {
  auto mode = in.rdma.GetNetnsMode();
  if (!mode.ok()) {
    return Fail("rdma-netns",
                "cannot read the RDMA netns mode over RDMA netlink: " + mode.status().message(),
                mode.status().code() == StatusCode::kUnavailable
                    ? "the RDMA core is not loaded: load the HCA's RDMA driver (e.g. mlx5_ib)"
                    : "run `rdma system show` to see what the kernel reports");
  }
  if (*mode == RdmaNetnsMode::kShared) {
    return Pass("rdma-netns",
                "shared: every network namespace sees every RDMA device (shared pools need "
                "this)");
  }
  std::vector<std::string> names;
  for (const auto& d : ListRdmaDevices(in.snap)) names.push_back(d.name);
  if (names.empty()) {
    return Fail("rdma-netns", "exclusive, and no RDMA device is in this network namespace",
                "shared pools need `rdma system set netns shared` on the node; exclusive pools "
                "need a CNI that moves the RDMA device into the pod (hcashare-cni, rdma-cni)");
  }
  return Pass("rdma-netns", "exclusive: this network namespace holds " + Join(names, ", "));
}

CheckResult CheckRuntimeCdi(const DoctorInputs& in) {
  const hostfacts::HostSnapshot& s = in.snap;
  const std::string fix =
      "set enable_cdi = true in /etc/containerd/config.toml under "
      "[plugins.\"io.containerd.grpc.v1.cri\"] (config version 2; containerd 1.7 or later) "
      "and restart containerd, or use containerd 2.x or CRI-O 1.23+";
  if (s.containerd_config_present) {
    const std::string imports =
        s.containerd_config_imports ? " (it imports other files, which doctor does not read)" : "";
    if (s.containerd_enable_cdi == "true") {
      return Pass("runtime-cdi",
                  "containerd's config sets enable_cdi = true: containers get CDI devices "
                  "(containerd 1.7 or later; 1.6 ignores the key)");
    }
    if (s.containerd_enable_cdi == "false") {
      return Warn("runtime-cdi",
                  "containerd's config sets enable_cdi = false: DRA claims (and --use-cdi) give "
                  "containers no RDMA device nodes and no HCASHARE_RDMA_DEVICES",
                  fix);
    }
    if (s.containerd_config_version >= 3) {
      return Pass("runtime-cdi", "containerd 2.x config (version " +
                                     std::to_string(s.containerd_config_version) +
                                     "): CDI is on unless enable_cdi = false" + imports);
    }
    return Warn("runtime-cdi",
                "containerd's config does not set enable_cdi" + imports +
                    ": containerd 1.7 leaves CDI off and 1.6 has none (2.x turns it on), so a "
                    "DRA claim's pod would start without its RDMA devices",
                fix);
  }
  if (s.crio_config_present) {
    return Pass("runtime-cdi", "CRI-O: containers get CDI devices (CRI-O 1.23 or later)");
  }
  return Pass("runtime-cdi",
              "no containerd or CRI-O config under /etc here: run on the node (or with "
              "--host-root) to check the runtime's CDI support, which DRA claims need");
}

}  // namespace hcashare::doctor
