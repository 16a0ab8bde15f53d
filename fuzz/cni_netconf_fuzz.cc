// Fuzzes the CNI network configuration read from stdin: ParseNetConf for every verb that
// takes one (ADD, DEL, CHECK, GC, STATUS), then SelectMac, and the prevResult through
// ParseResult.
// Invariants beyond "no crash":
//  - errors are code 1, 6 or 7 and print as valid JSON;
//  - an accepted configuration holds only values in their documented ranges (VLAN, QoS,
//    MTU, rates), its MACs, GUIDs and device ID are already in normalised form (parsing them
//    again gives them back);
//  - a parsed prevResult renders and round-trips like any result (see cni_check.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cni/netconf.h"
#include "cni/node_config.h"
#include "cni/result.h"
#include "cni/syntax.h"
#include "fuzz/cni_check.h"
#include "fuzz/fuzz_check.h"

namespace {

namespace cni = hcashare::cni;

void CheckMac(const std::optional<std::string>& mac) {
  if (mac) FUZZ_CHECK(cni::ParseUnicastMac(*mac) == *mac);
}

void CheckGuid(const std::optional<std::string>& guid) {
  if (!guid) return;
  std::string problem;
  FUZZ_CHECK(cni::ParseVfGuid(*guid, &problem) == *guid);
}

void CheckConf(const cni::NetConf& conf) {
  if (conf.vlan) FUZZ_CHECK(*conf.vlan >= 0 && *conf.vlan <= cni::kMaxVlan);
  if (conf.vlan_qos) FUZZ_CHECK(*conf.vlan_qos >= 0 && *conf.vlan_qos <= cni::kMaxVlanQos);
  if (conf.mtu) FUZZ_CHECK(*conf.mtu >= cni::kMinMtu && *conf.mtu <= cni::kMaxMtu);
  for (const auto& rate : {conf.min_tx_rate, conf.max_tx_rate}) {
    if (rate) FUZZ_CHECK(*rate >= 0 && *rate <= cni::kMaxTxRate);
  }
  CheckMac(conf.mac);
  CheckMac(conf.runtime_mac);
  CheckGuid(conf.guid);
  CheckGuid(conf.runtime_guid);
  CheckGuid(conf.args_guid);
  if (conf.device) {
    const auto name = cni::ParseDeviceName(conf.device->value);
    FUZZ_CHECK(name && name->value == conf.device->value && name->kind == conf.device->kind);
  }
  const auto mac = cni::SelectMac(conf, {});
  if (mac.ok()) {
    CheckMac(*mac);
  } else {
    hcashare::fuzz::CheckCniError(mac.status());
  }
  if (conf.prev_result) {
    const auto prev = cni::ParseResult(*conf.prev_result);
    if (prev.ok()) {
      hcashare::fuzz::CheckResultRoundTrip(*prev);
    } else {
      hcashare::fuzz::CheckCniError(prev.status());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (cni::Verb verb :
       {cni::Verb::kAdd, cni::Verb::kDel, cni::Verb::kCheck, cni::Verb::kGc, cni::Verb::kStatus}) {
    const hcashare::Result<cni::NetConf> conf = cni::ParseNetConf(text, verb);
    if (!conf.ok()) {
      const int code = cni::CniCodeOf(conf.status());
      FUZZ_CHECK(code == cni::kErrIncompatibleVersion || code == cni::kErrDecode ||
                 code == cni::kErrInvalidNetConf);
      hcashare::fuzz::CheckCniError(conf.status());
      continue;
    }
    CheckConf(*conf);
  }
  // The same bytes as the node file (cni/node_config.h): an error is always code 7.
  const hcashare::Result<cni::NodeSettings> node = cni::ParseNodeSettings(text, "node");
  if (!node.ok()) {
    FUZZ_CHECK(cni::CniCodeOf(node.status()) == cni::kErrInvalidNetConf);
    hcashare::fuzz::CheckCniError(node.status());
  } else {
    FUZZ_CHECK(!node->state_dir.empty() && node->state_dir[0] == '/');
    FUZZ_CHECK(!node->pool_info_dir.empty() && node->pool_info_dir[0] == '/');
  }
  return 0;
}
