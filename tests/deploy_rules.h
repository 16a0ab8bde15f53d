// The rules every DaemonSet of deploy/ must hold (the kustomize base and overlays, the
// Helm chart with any values): the host paths it may mount and how, capabilities,
// seccomp, probes, the rolling update, resources from the measured RSS, the image, and
// what the DRA driver adds (its socket directory, NODE_NAME, the API server token).
// tests/deploy_rules_test.cc shows that the checker catches each broken rule.
#pragma once

#include <string>
#include <vector>

#include "tests/deploy_support.h"

namespace hcashare::deploy {

// The image repository of the manifests.
extern const std::string kImageRepo;

// What a DaemonSet is expected to say where the manifests differ.
struct Expect {
  std::string kubelet_root = "/var/lib/kubelet";
  // The kubelet keeps it there whatever its --root-dir (deviceplugin/resource_server.h).
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string cni_bin_dir = "/opt/cni/bin";
  std::string image = kImageRepo + ":0.1.0";
  bool install_cni = true;
  // The DRA driver the DaemonSet serves ("": none). With one, <kubelet root>/plugins/<driver>
  // is mounted (and no other directory of plugins/), NODE_NAME comes from spec.nodeName and
  // the pod has a ServiceAccount and its token; without, the token is not mounted.
  std::string dra_driver;
};

// Our rules for the DaemonSet `ds`; returns every broken one ({} when it holds them all).
std::vector<std::string> CheckDaemonSet(json ds, const Expect& e);

}  // namespace hcashare::deploy
