// The CDI spec of one prepared ResourceClaim: kind "<driver>/claim", one CDI device per
// allocated device named "<claim UID>-<device name>", in a file of its own per claim,
// "hcashare-dra-<driver with '.' -> '_'>-<claim UID>.json" in the CDI spec directory. Each
// device carries the RDMA device's char devices, /dev/infiniband/rdma_cm once, and the
// environment the device plugin sets (common/env_names.h).
#pragma once

#include <string>
#include <vector>

namespace hcashare::dra {

// What the spec needs of one device.
struct CdiClaimDevice {
  std::string name;                       // the DRA device name
  std::string resource_name;              // "<prefix>/<name>" of the config resource
  std::vector<std::string> rdma_devices;  // "mlx5_0", ...
  std::vector<std::string> char_devices;  // host paths (rdma_cm is added)
};

// "<driver>/claim".
std::string ClaimCdiKind(const std::string& driver);
// "<claim uid>-<device>".
std::string ClaimCdiDeviceName(const std::string& claim_uid, const std::string& device);
// "<driver>/claim=<claim uid>-<device>": the CDI ID returned to the kubelet.
std::string ClaimCdiDeviceId(const std::string& driver, const std::string& claim_uid,
                             const std::string& device);
// "hcashare-dra-<driver, '.' -> '_'>-<claim uid>.json".
std::string ClaimCdiSpecFileName(const std::string& driver, const std::string& claim_uid);
// The spec's text (JSON, cdiVersion 0.5.0); `devices` each once, in the order given.
std::string ClaimCdiSpecJson(const std::string& driver, const std::string& claim_uid,
                             const std::vector<CdiClaimDevice>& devices);

}  // namespace hcashare::dra
