#include "cni/vf_rebind.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cni/error.h"
#include "cni/fault_points.h"
#include "cni/steps.h"
#include "common/log.h"
#include "hostfacts/live.h"

namespace hcashare::cni {
namespace {

using std::chrono::milliseconds;

// How long a bound VF's driver may take to create its netdev (mlx5: well under a second).
constexpr milliseconds kNetdevWait{5000};
// Binds: the first try and three more after 100, 200 and 400 ms (at most ~0.7 s of waits).
constexpr int kBindTries = 4;
constexpr milliseconds kFirstBindBackoff{100};
// Renames that lost a race: up to 8 tries, 20 ms apart, then doubling up to 160 ms.
constexpr int kRenameTries = 8;
constexpr milliseconds kFirstRenameBackoff{20};
constexpr milliseconds kMaxRenameBackoff{160};

// The command that binds the VF by hand.
std::string ManualBind(const AttachmentState& state) {
  return "echo " + state.device + " > /sys/bus/pci/drivers/" + state.vf_driver + "/bind";
}

// A temporary name for the VF's netdev while another netdev holds its host name
// ("hcr" and 8 hex digits of the PCI address's FNV-1a hash: 11 characters).
std::string TemporaryName(const std::string& device) {
  uint32_t h = 2166136261u;
  for (unsigned char c : device) h = (h ^ c) * 16777619u;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "hcr%08x", h);
  return buf;
}

// Renames `name` to the recorded host name (down first, as the kernel requires) and sets
// the recorded admin state.
Status NameAndRaise(const std::string& name, const AttachmentState& state, NetdevOps& netdev) {
  std::string current = name;
  if (!state.host_ifname.empty() && name != state.host_ifname) {
    RETURN_IF_ERROR(netdev.SetUp(name, false));
    RETURN_IF_ERROR(netdev.Rename(name, state.host_ifname));
    current = state.host_ifname;
  }
  return state.host_up ? netdev.SetUp(current, true) : Status::Ok();
}

// A rename race: the netdev was renamed under us, or its host name is held by another.
bool IsRenameRace(const Status& st) {
  return st.IsNotFound() || st.code() == StatusCode::kAlreadyExists;
}

// The netdevs the VF of `state` has in the host now.
std::vector<std::string> HostNetdevs(const AttachmentState& state, const Host& host) {
  return hostfacts::LiveFacts(host).Netdevs(hostfacts::PciOrAux(state.device, state.is_sf));
}

}  // namespace

Status BindVf(const AttachmentState& state, VfDriver& driver) {
  if (!IsPlainDriverName(state.vf_driver)) {
    return CniStatus(kErrHostSetupFailed, state.device + " is bound to no driver",
                     "the attachment's state records no driver for it (written by an older "
                     "hcashare-cni?); bind it to its network driver by hand: echo " +
                         state.device + " > /sys/bus/pci/drivers/<driver>/bind");
  }
  Status st;
  milliseconds backoff = kFirstBindBackoff;
  std::string now;
  for (int attempt = 1;; ++attempt) {
    st = driver.Bind(state.device, state.vf_driver);
    auto bound = driver.BoundDriver(state.device);
    now = bound.ok() ? *bound : "";
    // Bound to its driver, by this write or by one that raced it (udev's autoprobe).
    if (now == state.vf_driver) return Status::Ok();
    if (!now.empty() || attempt == kBindTries) break;
    LogWarn("binding the VF failed; trying again",
            {{"device", state.device},
             {"driver", state.vf_driver},
             {"attempt", attempt},
             {"error", st.ok() ? "still bound to no driver" : st.message()}});
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
  const std::string why = st.ok() ? "the bind left it bound to no driver" : st.message();
  if (!now.empty()) {
    return CniStatus(kErrHostSetupFailed,
                     state.device + " is bound to " + now + ", not to " + state.vf_driver,
                     "another driver claimed it while it was unbound (" + why +
                         "); unbind it from " + now + " and run: " + ManualBind(state));
  }
  return CniStatus(
      kErrHostSetupFailed,
      state.device + " is left bound to no driver: cannot bind it to " + state.vf_driver,
      why + " (" + std::to_string(kBindTries) +
          " tries); the attachment is kept, and DEL or `hcashare cni-gc` bind it "
          "again; to bind it by hand: " +
          ManualBind(state));
}

Status AdoptVfNetdev(const AttachmentState& state, const AttachContext& ctx) {
  const auto deadline = std::chrono::steady_clock::now() + kNetdevWait;
  milliseconds backoff = kFirstRenameBackoff;
  Status last;
  for (int attempt = 1; attempt <= kRenameTries; ++attempt) {
    const auto left = std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(
                                                    deadline - std::chrono::steady_clock::now()));
    const std::vector<std::string> names =
        WaitForDeviceNetdevs(ctx.host, state.device, state.is_sf, left);
    if (names.empty()) {
      return Status::IoError(state.device + " has no netdev " +
                             std::to_string(kNetdevWait.count()) + " ms after its bind");
    }
    last = NameAndRaise(names.front(), state, ctx.netdev);
    if (last.ok() || !IsRenameRace(last)) break;
    LogInfo("renaming the VF's new netdev raced another rename; trying again",
            {{"device", state.device},
             {"netdev", names.front()},
             {"ifname", state.host_ifname},
             {"error", last.message()}});
    if (last.code() == StatusCode::kAlreadyExists) {
      // Another netdev holds our name, perhaps a sibling that wants the one we hold: free
      // ours (best effort; a failure shows again on the next try).
      const auto again = HostNetdevs(state, ctx.host);
      if (!again.empty() && again.front() != state.host_ifname) {
        (void)ctx.netdev.SetUp(again.front(), false);
        (void)ctx.netdev.Rename(again.front(), TemporaryName(state.device));
      }
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, kMaxRenameBackoff);
  }
  if (last.ok()) return last;
  return Summarize(
      last, "cannot give the netdev of " + state.device + " its host name " + state.host_ifname);
}

Status RebindVf(const AttachmentState& state, const AttachContext& ctx,
                std::string_view fault_point, bool* unbound) {
  if (ctx.vf_driver == nullptr) return Status::FailedPrecondition("no VF driver to rebind with");
  VfDriver& driver = *ctx.vf_driver;
  if (!IsPlainDriverName(state.vf_driver)) {
    return Status::FailedPrecondition("the state of " + state.device +
                                      " records no driver to rebind it to");
  }
  ASSIGN_OR_RETURN(const std::string bound, driver.BoundDriver(state.device));
  if (!bound.empty() && bound != state.vf_driver) {
    return CniStatus(
        kErrHostSetupFailed, state.device + " is bound to " + bound + ", not to " + state.vf_driver,
        "it was bound to " + state.vf_driver + " when it was attached; it is left as it is");
  }
  if (!bound.empty()) RETURN_IF_ERROR(driver.Unbind(state.device, bound));
  if (unbound != nullptr) *unbound = true;
  if (!fault_point.empty()) RETURN_IF_ERROR(FaultPoint(fault_point));
  RETURN_IF_ERROR(BindVf(state, driver));
  return AdoptVfNetdev(state, ctx);
}

bool MayNeedRebindRepair(const AttachmentState& state) {
  return !state.dpdk && !state.is_sf && !state.host_ifname.empty() && state.Done("pf:guid");
}

Result<bool> RepairRebindingVf(const AttachmentState& state, const AttachContext& ctx) {
  if (ctx.vf_driver == nullptr) return Status::FailedPrecondition("no VF driver to bind with");
  ASSIGN_OR_RETURN(const std::string bound, ctx.vf_driver->BoundDriver(state.device));
  if (bound.empty()) {
    LogWarn("the VF is bound to no driver (a rebind failed or was cut short); binding it again",
            {{"device", state.device}, {"driver", state.vf_driver}});
    RETURN_IF_ERROR(BindVf(state, *ctx.vf_driver));
  } else {
    // Bound: its netdev is either in the host (a rebind that ended before its rename, or
    // that never left) or not (in the pod, or on its way back from a pod that is gone).
    bool in_host = false;
    for (const auto& name : HostNetdevs(state, ctx.host)) {
      in_host = in_host || ctx.netdev.Get(name).ok();
    }
    if (!in_host) return false;
  }
  RETURN_IF_ERROR(AdoptVfNetdev(state, ctx));
  return true;
}

}  // namespace hcashare::cni
