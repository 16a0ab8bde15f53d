// The CDI spec of one prepared ResourceClaim: kind "<driver>/claim", one CDI device per
// allocated device named "<claim UID>-<device name>", in a file of its own per claim,
// "hcashare-dra-<driver with '.' -> '_'>-<claim UID>.json" in the CDI spec directory. Each
// device carries its RDMA device's char devices and /dev/infiniband/rdma_cm.
//
// The variables naming the claim's RDMA devices sit in the spec's own containerEdits, which
// a runtime applies once for any device of the spec a container gets. A runtime merges the
// specs of a container's devices and keeps the last value of a variable set twice, so no
// device sets a variable of its own: one device per rail would leave one rail named.
//   HCASHARE_DRA_CLAIM_<C>_RDMA_DEVICES                 every RDMA device of the claim
//   HCASHARE_DRA_CLAIM_<C>_NCCL_IB_HCA                  the same as NCCL_IB_HCA ("=a,b")
//   HCASHARE_DRA_CLAIM_<C>_REQUEST_<R>_RDMA_DEVICES     those of request R
//   HCASHARE_DRA_CLAIM_<C>_REQUEST_<R>_NCCL_IB_HCA
// <C> is the pod's name for the claim (the generated claim's pod-claim-name annotation) or
// the claim's name, <R> the request (a subrequest's parent), each upper-cased with every
// other byte turned into '_'. A claim with one request also sets what the device plugin sets
// (common/env_names.h): HCASHARE_RDMA_DEVICES, HCASHARE_RDMA_DEVICES_<resource> and, for a
// resource with setNcclIbHca, NCCL_IB_HCA. A claim with several requests does not: a
// container may hold only some of them, and these names must not name devices it lacks.
#pragma once

#include <string>
#include <vector>

namespace hcashare::dra {

// What the spec needs of one device.
struct CdiClaimDevice {
  std::string name;                       // the DRA device name
  std::string resource_name;              // "<prefix>/<name>" of the config resource
  std::vector<std::string> requests;      // the requests it was allocated for (parents)
  std::vector<std::string> rdma_devices;  // "mlx5_0", ...
  std::vector<std::string> char_devices;  // host paths (rdma_cm is added)
  int numa_node = -1;                     // -1 when unknown
  bool set_nccl_ib_hca = false;           // its resource has `setNcclIbHca`
};

// What the spec needs of the claim.
struct CdiClaim {
  std::string uid;
  std::string label;                    // <C>: the pod's name for the claim, or its name
  std::vector<CdiClaimDevice> devices;  // each once
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
// "HCASHARE_DRA_CLAIM_<C>_" (with `request`: "..._REQUEST_<R>_"): the prefix of the claim's
// (the request's) variables; "RDMA_DEVICES" or "NCCL_IB_HCA" follows.
std::string ClaimEnvPrefix(const std::string& label, const std::string& request = "");
// The request a container names for allocation result `request`: a subrequest's parent
// ("rails/fast" -> "rails").
std::string ParentRequest(const std::string& request);
// The spec's text (JSON, cdiVersion 0.5.0): the devices in the order given, the variables
// above in the spec's containerEdits.
std::string ClaimCdiSpecJson(const std::string& driver, const CdiClaim& claim);

}  // namespace hcashare::dra
