// DRA claims the kubelet reports held by containers of this node (pod-resources v1 List,
// `dynamic_resources`; beta and on since Kubernetes 1.34). hcashare-cni's kubelet client
// reads them (kubelet/podresources.h); the DRA driver rebuilds a lost checkpoint from them and
// collects entries no pod holds.
#pragma once

#include <string>
#include <vector>

namespace hcashare::dra {

// One allocated device of a held claim.
struct KubeletClaimDevice {
  std::string driver;
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_device_ids;  // as Prepare answered them
};

// One claim, once however many containers hold it; devices each once.
struct KubeletClaim {
  std::string namespace_name;
  std::string name;
  std::vector<KubeletClaimDevice> devices;
};

}  // namespace hcashare::dra
