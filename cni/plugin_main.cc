#include "cni/plugin_main.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>

#include "cni/attach.h"
#include "cni/dra_chain.h"
#include "cni/dra_devices.h"
#include "cni/dra_status.h"
#include "cni/env.h"
#include "cni/error.h"
#include "cni/gc.h"
#include "cni/netconf.h"
#include "cni/node_config.h"
#include "cni/status.h"
#include "cni/stdin.h"
#include "cni/version.h"
#include "common/host.h"
#include "common/log.h"
#include "interop/dra_checkpoint.h"
#include "json/dump.h"
#include "kubelet/podresources.h"
#include "nl/netdev.h"
#include "nl/rdma_netlink.h"
#include "nl/sriov.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

// Prints the spec's error object for the failed `status` in `version` and returns the exit
// code. The protocol edge: the one place where a Status becomes a CniError.
int Fail(const Status& status, const std::string& version) {
  const CniError error = FromStatus(status);
  LogError(error.msg, {{"code", error.code}, {"details", error.details}});
  std::cout << DumpJson(ToJson(error, version)) << std::endl;
  return 1;
}

// The exit code of a verb that prints nothing on success.
int Finish(const Status& status, const std::string& version) {
  return status.ok() ? 0 : Fail(status, version);
}

// Sends log records to `path` (appended) instead of stderr.
void LogToFile(const std::string& path) {
  auto file = std::make_shared<std::ofstream>(path, std::ios::app);
  if (!*file) {
    LogWarn("cannot open logFile; logging to stderr", {{"logFile", path}});
    return;
  }
  auto mu = std::make_shared<std::mutex>();
  SetLogSink([file, mu](const std::string& line) {
    std::lock_guard<std::mutex> lock(*mu);
    *file << line << std::endl;
  });
}

}  // namespace

int RunPlugin(const PluginBackends& backends) {
  SetLogLevel(LogLevel::kWarn);
  auto input = ReadStdin(STDIN_FILENO);
  const std::string version = input.ok() ? RequestedVersion(*input) : std::string(kLatestVersion);
  const EnvMap environment = ProcessEnvironment();
  auto env = ParseCniEnv(environment);
  if (!env.ok()) return Fail(env.status(), version);
  if (!input.ok()) return Fail(input.status(), version);
  if (env->verb == Verb::kVersion) {
    std::cout << DumpJson(VersionResult(version)) << std::endl;
    return 0;
  }
  auto node = LoadNodeSettings(environment);
  if (!node.ok()) return Fail(node.status(), version);
  auto conf = ParseNetConf(*input, env->verb, *node);
  // A DEL whose configuration no longer validates still undoes what ADD recorded (a
  // configuration that is not even JSON, or of another version, is refused as before).
  const bool del_as_recorded =
      !conf.ok() && env->verb == Verb::kDel && CniCodeOf(conf.status()) == kErrInvalidNetConf;
  if (!conf.ok() && !del_as_recorded) return Fail(conf.status(), version);
  if (node->log_file) LogToFile(*node->log_file);
  SetLogLevel(conf.ok() ? conf->log_level.value_or(LogLevel::kInfo) : LogLevel::kInfo);
  if (conf.ok()) {
    for (const auto& w : conf->warnings) LogWarn(w, {{"network", conf->name}});
  }

  std::unique_ptr<Host> host = NewRootedHost(node->host_root);
  std::unique_ptr<NetdevOps> netdev = backends.netdev();
  std::unique_ptr<VfOps> vf = backends.vf();
  std::unique_ptr<RdmaSystem> rdma = backends.rdma();
  StateStore store(node->state_dir);
  std::unique_ptr<VfDriver> vf_driver = backends.vf_driver(*host);
  AttachContext ctx{*host, *netdev, *vf, *rdma, store, nullptr};
  ctx.vf_driver = vf_driver.get();
  // Asked once per invocation: the allocation check, the device choice and the DRA step
  // share it.
  std::optional<kubelet::PodDevices> kubelet_devices;
  auto lookup = [&]() -> Result<kubelet::PodDevices> {
    if (kubelet_devices) return *kubelet_devices;
    kubelet::PodResourcesOptions opts;
    opts.kubelet_root = node->kubelet_root_dir;
    opts.device_plugin_dir = node->device_plugin_dir;
    ASSIGN_OR_RETURN(
        kubelet_devices,
        kubelet::LookupPodDevices(opts, {env->PodNamespace(), env->PodName(), env->PodUid()}));
    return *kubelet_devices;
  };
  const std::string dra_checkpoint = dra::CheckpointPath(node->kubelet_root_dir, node->dra_driver);
  // Both answers are kept for the invocation: the DRA step asks for each of its devices.
  std::optional<PodDeviceMap> pod_devices;
  ctx.pod_devices = [&]() -> Result<PodDeviceMap> {
    if (pod_devices) return *pod_devices;
    ASSIGN_OR_RETURN(kubelet::PodDevices found, lookup());
    // DRA devices (pod-resources dynamic_resources) become addresses under their resources.
    RETURN_IF_ERROR(
        ResolveDraDevicesFromCheckpoint(node->dra_driver, dra_checkpoint, &found.by_resource));
    pod_devices = PodDeviceMap{std::move(found.by_resource), std::move(found.source)};
    return *pod_devices;
  };
  std::optional<std::vector<PodClaimDevice>> pod_dra_devices;
  ctx.pod_dra_devices = [&]() -> Result<std::vector<PodClaimDevice>> {
    if (pod_dra_devices) return *pod_dra_devices;
    Result<dra::Checkpoint> checkpoint = dra::Checkpoint::Load(dra_checkpoint);
    if (!checkpoint.ok()) {
      return Status(checkpoint.status().code(), "cannot read the DRA driver's checkpoint " +
                                                    dra_checkpoint + ": " +
                                                    checkpoint.status().message());
    }
    // Most pods of a node have no claim: their namespace has none prepared, and the kubelet
    // is not asked.
    if (!HasClaimsIn(*checkpoint, env->PodNamespace())) {
      pod_dra_devices.emplace();
      return *pod_dra_devices;
    }
    ASSIGN_OR_RETURN(kubelet::PodDevices found, lookup());
    pod_dra_devices =
        PodDraDevices(node->dra_driver, *checkpoint, env->PodNamespace(), found.by_resource);
    return *pod_dra_devices;
  };
  ctx.checkpoint_devices = [&]() -> Result<PodDeviceMap> {
    ASSIGN_OR_RETURN(DevicesByResource found,
                     kubelet::ReadCheckpointDevices(
                         kubelet::KubeletCheckpointPath(node->device_plugin_dir), env->PodUid()));
    return PodDeviceMap{std::move(found), "checkpoint"};
  };

  if (del_as_recorded) {
    return Finish(CmdDelWithInvalidConf(*env, *node, conf.status(), ctx), version);
  }
  if (conf->mode == AttachMode::kDraClaims) {
    switch (env->verb) {
      case Verb::kAdd: {
        auto result = CmdAddDraClaims(*env, *conf, ctx);
        if (!result.ok()) return Fail(result.status(), conf->cni_version);
        std::cout << result->dump() << std::endl;
        return 0;
      }
      case Verb::kDel:
        return Finish(CmdDelDraClaims(*env, *conf, ctx), conf->cni_version);
      case Verb::kCheck:
        return Finish(CmdCheckDraClaims(*env, *conf, ctx), conf->cni_version);
      default:
        break;  // GC and STATUS as for any network of the plugin
    }
  }
  switch (env->verb) {
    case Verb::kAdd: {
      auto result = CmdAdd(*env, *conf, ctx);
      if (!result.ok()) return Fail(result.status(), conf->cni_version);
      // A claim's device given to a network (Multus's DRA path): its claim's status too.
      if (conf->mode == AttachMode::kNetdev) {
        RecordDraNetworkStatusOfAttachment(*env, *conf, ctx, *result);
      }
      std::cout << result->dump() << std::endl;
      return 0;
    }
    case Verb::kDel:
      return Finish(CmdDel(*env, *conf, ctx), conf->cni_version);
    case Verb::kCheck:
      return Finish(CmdCheck(*env, *conf, ctx), conf->cni_version);
    case Verb::kGc:
      return Finish(CmdGc(*env, *conf, ctx), conf->cni_version);
    case Verb::kStatus:
      return Finish(CmdStatus(*env, *conf), conf->cni_version);
    case Verb::kVersion:
      break;
  }
  return 0;
}

PluginBackends NetlinkBackends() {
  return {NewNetlinkNetdevOps, NewNetlinkVfOps, NewRdmaNetlink, NewSysfsVfDriver};
}

}  // namespace hcashare::cni
