// Tests for the CNI protocol layer (cni/), the network configuration: every error path,
// defaults, deviceID precedence, typo warnings, and the JSON field helpers behind its
// messages.
#include <unistd.h>

#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cni/env.h"
#include "cni/error.h"
#include "cni/netconf.h"
#include "cni/result.h"
#include "cni/stdin.h"
#include "cni/syntax.h"
#include "cni/verb.h"
#include "cni/version.h"
#include "common/unique_fd.h"
#include "config/json_fields.h"
#include "tests/cni_test_util.h"

namespace hcashare::cni {
namespace {

using nlohmann::json;
using namespace test_util;  // the shared helpers, unqualified

// ---------------------------------------------------------------------------------------
// Network configuration

// A minimal valid ADD configuration, as Multus would pass it.
json BaseConf() {
  return json::parse(R"({
    "cniVersion": "1.0.0",
    "name": "rdma-net-a",
    "type": "hcashare-cni",
    "deviceID": "0000:3b:00.2"
  })");
}

Result<NetConf> Parse(const json& conf, Verb verb = Verb::kAdd) {
  return ParseNetConf(conf.dump(), verb);
}

// BaseConf() with `key` set to `value` (parsed as JSON).
json BaseWith(const std::string& key, const std::string& value_json) {
  json conf = BaseConf();
  conf[key] = json::parse(value_json);
  return conf;
}

TEST(CniNetConfTest, MinimalConfigGetsDefaults) {
  const Result<NetConf> conf = Parse(BaseConf());
  ASSERT_TRUE(conf.ok()) << conf.status().details();
  EXPECT_EQ(conf->cni_version, "1.0.0");
  EXPECT_EQ(conf->name, "rdma-net-a");
  EXPECT_EQ(conf->type, "hcashare-cni");
  ASSERT_TRUE(conf->device);
  EXPECT_EQ(conf->device.value().value, "0000:3b:00.2");
  EXPECT_EQ(conf->device.value().kind, DeviceKind::kPciFunction);
  EXPECT_EQ(conf->device.value().source, DeviceIdSource::kDeviceId);
  EXPECT_EQ(conf->node.kubelet_root_dir, "/var/lib/kubelet");
  EXPECT_EQ(conf->node.state_dir, "/var/lib/cni/hcashare");
  EXPECT_EQ(conf->node.host_root, "/");
  EXPECT_EQ(conf->node.pool_info_dir, "/var/run/hcashare/pools");
  EXPECT_TRUE(conf->node.check_allocation);
  EXPECT_FALSE(conf->resource_name);
  EXPECT_FALSE(conf->vlan);
  EXPECT_FALSE(conf->vlan_qos);
  EXPECT_FALSE(conf->vlan_proto);
  EXPECT_FALSE(conf->mac);
  EXPECT_FALSE(conf->runtime_mac);
  EXPECT_FALSE(conf->spoofchk);
  EXPECT_FALSE(conf->trust);
  EXPECT_FALSE(conf->link_state);
  EXPECT_FALSE(conf->min_tx_rate);
  EXPECT_FALSE(conf->max_tx_rate);
  EXPECT_FALSE(conf->mtu);
  EXPECT_FALSE(conf->ipam);
  EXPECT_EQ(conf->ipam_type, "");
  EXPECT_FALSE(conf->log_level);
  EXPECT_FALSE(conf->node.log_file);
  EXPECT_FALSE(conf->prev_result);
  EXPECT_FALSE(conf->runtime_config);
  EXPECT_FALSE(conf->valid_attachments);
  EXPECT_FALSE(conf->RequestsPfSideSettings());
  EXPECT_TRUE(conf->warnings.empty());
  EXPECT_EQ(conf->raw, BaseConf());
}

TEST(CniNetConfTest, FullConfigIsNormalised) {
  const json full = json::parse(R"({
    "cniVersion": "0.3.1",
    "name": "sriov-rdma",
    "type": "hcashare-cni",
    "deviceID": "0000:AF:06.1",
    "resourceName": "nvidia.com/hca_vfs",
    "vlan": 100,
    "vlanQoS": 3,
    "vlanProto": "802.1AD",
    "mac": "0A:BB:CC:DD:EE:01",
    "mtu": 9000,
    "spoofchk": "on",
    "trust": "OFF",
    "link_state": "Disable",
    "min_tx_rate": 100,
    "max_tx_rate": 1000,
    "ipam": {"type": "host-local", "subnet": "10.56.217.0/24", "gateway": "10.56.217.1"},
    "kubeletRootDir": "/var/lib/rancher/k3s/agent/kubelet",
    "stateDir": "/run/hcashare",
    "hostRoot": "/host",
    "logLevel": "warning",
    "logFile": "/var/log/hcashare-cni.log",
    "runtimeConfig": {"mac": "0a:00:00:00:00:02"},
    "capabilities": {"mac": true},
    "args": {"cni": {"x": 1}},
    "dns": {}
  })");
  // The node's settings, which the configuration repeats (as NADs written before they
  // moved to the node file do).
  NodeSettings node = DefaultNodeSettings();
  node.kubelet_root_dir = "/var/lib/rancher/k3s/agent/kubelet";
  node.state_dir = "/run/hcashare/";
  node.host_root = "/host";
  node.log_file = "/var/log/hcashare-cni.log";
  const Result<NetConf> conf = ParseNetConf(full.dump(), Verb::kAdd, node);
  ASSERT_TRUE(conf.ok()) << conf.status().details();
  EXPECT_EQ(conf->device.value().value, "0000:af:06.1");
  EXPECT_EQ(conf->resource_name, "nvidia.com/hca_vfs");
  EXPECT_EQ(conf->vlan, 100);
  EXPECT_EQ(conf->vlan_qos, 3);
  EXPECT_EQ(conf->vlan_proto, "802.1ad");
  EXPECT_EQ(conf->mac, "0a:bb:cc:dd:ee:01");
  EXPECT_EQ(conf->runtime_mac, "0a:00:00:00:00:02");
  EXPECT_EQ(conf->mtu, 9000);
  EXPECT_EQ(conf->spoofchk, true);
  EXPECT_EQ(conf->trust, false);
  EXPECT_EQ(conf->link_state, LinkState::kDisable);
  EXPECT_EQ(conf->min_tx_rate, 100);
  EXPECT_EQ(conf->max_tx_rate, 1000);
  ASSERT_TRUE(conf->ipam);
  EXPECT_EQ(*conf->ipam, full["ipam"]);
  EXPECT_EQ(conf->ipam_type, "host-local");
  EXPECT_EQ(conf->node.kubelet_root_dir, "/var/lib/rancher/k3s/agent/kubelet");
  EXPECT_EQ(conf->node.state_dir, "/run/hcashare/");
  EXPECT_EQ(conf->node.host_root, "/host");
  EXPECT_EQ(conf->log_level, LogLevel::kWarn);
  EXPECT_EQ(conf->node.log_file, "/var/log/hcashare-cni.log");
  EXPECT_EQ(conf->runtime_config, full["runtimeConfig"]);
  EXPECT_TRUE(conf->RequestsPfSideSettings());
  EXPECT_TRUE(conf->warnings.empty()) << conf->warnings[0];
  EXPECT_EQ(conf->raw, full);
}

TEST(CniNetConfTest, EachPfSideSettingCounts) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"vlan", "0"},
                                                        {"mac", "\"02:00:00:00:00:01\""},
                                                        {"spoofchk", "\"off\""},
                                                        {"trust", "\"on\""},
                                                        {"link_state", "\"auto\""},
                                                        {"min_tx_rate", "0"},
                                                        {"max_tx_rate", "0"},
                                                        {"guid", "\"02:00:00:00:00:00:00:01\""}}) {
    const Result<NetConf> conf = Parse(BaseWith(key, value));
    ASSERT_TRUE(conf.ok()) << key << ": " << conf.status().details();
    EXPECT_TRUE(conf->RequestsPfSideSettings()) << key;
  }
  const Result<NetConf> mtu_only = Parse(BaseWith("mtu", "1500"));
  ASSERT_TRUE(mtu_only.ok());
  EXPECT_FALSE(mtu_only->RequestsPfSideSettings());
  // A null counts as absent, as in Go.
  const Result<NetConf> null_vlan = Parse(BaseWith("vlan", "null"));
  ASSERT_TRUE(null_vlan.ok());
  EXPECT_FALSE(null_vlan->vlan);
}

TEST(CniNetConfTest, DecodeFailuresAreCode6) {
  EXPECT_TRUE(FailsWith(ParseNetConf("{\"cniVersion\": ", Verb::kAdd), 6,
                        "cannot decode network configuration"));
  EXPECT_TRUE(FailsWith(ParseNetConf("", Verb::kAdd), 6, "cannot decode network configuration"));
  EXPECT_TRUE(FailsWith(ParseNetConf("[1,2]", Verb::kAdd), 6, "must be a JSON object, got array"));
  EXPECT_TRUE(FailsWith(ParseNetConf("\"x\"", Verb::kDel), 6, "must be a JSON object"));
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(FailsWith(ParseNetConf(deep, Verb::kAdd), 6, "nested deeper than 64 levels"));
  json nested = BaseConf();
  json* at = &nested["runtimeConfig"];
  for (int i = 0; i < 70; ++i) at = &(*at)["x"];
  *at = 1;
  EXPECT_TRUE(FailsWith(Parse(nested), 6, "nested deeper than 64 levels"));
  // A tenant's NAD config of a million values is refused before it is built (issue 26's
  // value count, now also for the CNI's inputs); a large but ordinary one is fine.
  json wide = BaseConf();
  wide["runtimeConfig"]["x"] = json::array();
  for (size_t i = 0; i < jsonin::kMaxJsonValues; ++i)
    wide["runtimeConfig"]["x"].push_back(json::object());
  EXPECT_TRUE(FailsWith(Parse(wide), 6, "more than 100000 values"));
  json ordinary = BaseConf();
  for (int i = 0; i < 2000; ++i) ordinary["runtimeConfig"]["y"].push_back(i);
  EXPECT_TRUE(Parse(ordinary).ok());
  // Moderate nesting is fine.
  json shallow = BaseConf();
  shallow["runtimeConfig"]["a"]["b"]["c"] = 1;
  EXPECT_TRUE(Parse(shallow).ok());
}

TEST(CniNetConfTest, CniVersionRules) {
  json conf = BaseConf();
  conf.erase("cniVersion");
  EXPECT_TRUE(FailsWith(Parse(conf), 7, "cniVersion: required"));
  EXPECT_TRUE(FailsWith(Parse(conf, Verb::kDel), 7, "cniVersion: required"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("cniVersion", "1.0")), 7,
                        "cniVersion: must be a string, got number 1.0"));
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("cniVersion", "\"0.2.0\"")), 1, "unsupported cniVersion \"0.2.0\""));
  // libcni sends "" for a single-plugin NAD without one: the error says what to add.
  EXPECT_TRUE(FailsWith(Parse(BaseWith("cniVersion", "\"\"")), 1,
                        "the network configuration has no cniVersion | add \"cniVersion\": "
                        "\"1.0.0\" (supported versions: 0.3.0,"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("cniVersion", "\"0.3.1\""), Verb::kCheck), 1,
                        "CHECK is not supported by cniVersion \"0.3.1\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("cniVersion", "\"1.0.0\""), Verb::kStatus), 1,
                        "STATUS is not supported"));
  // The version error comes first even when other fields are wrong too.
  json both = BaseWith("cniVersion", "\"9.9.9\"");
  both["vlan"] = 99999;
  EXPECT_TRUE(FailsWith(Parse(both), 1, "unsupported cniVersion"));
  for (const std::string& v : SupportedVersions()) {
    EXPECT_TRUE(Parse(BaseWith("cniVersion", "\"" + v + "\"")).ok()) << v;
  }
}

TEST(CniNetConfTest, IdentityFields) {
  for (const char* key : {"name", "type"}) {
    json conf = BaseConf();
    conf.erase(key);
    EXPECT_TRUE(FailsWith(Parse(conf), 7, std::string(key) + ": required"));
  }
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("name", "\"my net\"")), 7,
                "name: may contain only letters, digits, '_', '.' and '-', got \"my net\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("name", "\"../x\"")), 7, "name: must start with"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("type", "\"../bin/sh\"")), 7,
                        "type: must be a plugin name, not a path, got \"../bin/sh\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("resourceName", "5")), 7,
                        "resourceName: must be a string, got number 5"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("resourceName", "\"../../etc/passwd\"")), 7,
                        "resourceName: must be an extended resource name"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("resourceName", "\"a..b/vfs\"")), 7,
                        "resourceName: has an invalid prefix: \"a..b\" is not a DNS subdomain"));
}

TEST(CniNetConfTest, CollectsEveryErrorInOneCode7) {
  json conf = BaseConf();
  conf["vlan"] = 5000;
  conf["mtu"] = 20;
  conf["mac"] = "01:00:5e:00:00:01";
  conf["spoofchk"] = "yes";
  conf["ipam"] = {{"type", "../host-local"}};
  const Result<NetConf> parsed = Parse(conf);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(CniCodeOf(parsed.status()), 7);
  EXPECT_EQ(parsed.status().message(), "invalid network configuration");
  EXPECT_EQ(parsed.status().details(),
            "vlan: must be 0..4094, got 5000; "
            "mac: must be a unicast address, got \"01:00:5e:00:00:01\"; "
            "spoofchk: must be \"on\" or \"off\", got \"yes\"; "
            "mtu: must be 68..65535, got 20; "
            "ipam.type: must be a plugin name, not a path, got \"../host-local\"");
}

TEST(CniNetConfTest, WrongJsonTypesNameThePath) {
  const struct {
    const char* key;
    const char* value;
    const char* detail;
  } cases[] = {
      {"vlan", "\"5\"", "vlan: must be an integer, got string \"5\""},
      {"vlan", "5.0", "vlan: must be an integer, got number 5.0"},
      {"vlan", "true", "vlan: must be an integer, got boolean true"},
      {"vlanQoS", "[1]", "vlanQoS: must be an integer, got array"},
      {"mtu", "\"9000\"", "mtu: must be an integer, got string \"9000\""},
      {"deviceID", "42", "deviceID: must be a string, got number 42"},
      {"mac", "{}", "mac: must be a string, got object"},
      {"spoofchk", "true", "spoofchk: must be a string, got boolean true"},
      {"ipam", "\"host-local\"", "ipam: must be an object, got string \"host-local\""},
      {"prevResult", "[]", "prevResult: must be an object, got array"},
      {"runtimeConfig", "\"x\"", "runtimeConfig: must be an object, got string \"x\""},
      {"stateDir", "1", "stateDir: must be a string, got number 1"},
      {"min_tx_rate", "1.5", "min_tx_rate: must be an integer, got number 1.5"},
  };
  for (const auto& c : cases) {
    const Result<NetConf> parsed = Parse(BaseWith(c.key, c.value));
    ASSERT_FALSE(parsed.ok()) << c.key << "=" << c.value;
    EXPECT_EQ(CniCodeOf(parsed.status()), 7) << c.key;
    EXPECT_EQ(parsed.status().details(), c.detail);
  }
  json runtime_type = BaseConf();
  runtime_type.erase("deviceID");
  runtime_type["runtimeConfig"] = {{"deviceID", 3}};
  EXPECT_TRUE(
      FailsWith(Parse(runtime_type), 7, "runtimeConfig.deviceID: must be a string, got number 3"));
}

TEST(CniNetConfTest, RejectsHostileDeviceIds) {
  for (const char* bad : {"../../etc", "0000:3b:00.2/..", "0000:3b:00.2/../../x", "/sys/bus/pci",
                          "0000:3b:00.8", "mlx5_core.sf.x", "mlx5_core/sf.4", "..", "", "eth0"}) {
    const std::string expected =
        std::string(
            "deviceID: must be a PCI address (DDDD:BB:DD.F) or an auxiliary device name "
            "(e.g. mlx5_core.sf.4), got ") +
        json(bad).dump();
    const Result<NetConf> parsed = Parse(BaseWith("deviceID", json(bad).dump()));
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(CniCodeOf(parsed.status()), 7) << bad;
    EXPECT_EQ(parsed.status().details(), expected);
  }
  json via_pci_bus = BaseConf();
  via_pci_bus.erase("deviceID");
  via_pci_bus["pciBusID"] = "0000:3b:00.2/..";
  EXPECT_TRUE(FailsWith(Parse(via_pci_bus), 7,
                        "pciBusID: must be a PCI address (DDDD:BB:DD.F) or an auxiliary device "
                        "name (e.g. mlx5_core.sf.4), got \"0000:3b:00.2/..\""));
}

TEST(CniNetConfTest, DeviceIdForms) {
  const Result<NetConf> short_pci = Parse(BaseWith("deviceID", "\"3B:00.2\""));
  ASSERT_TRUE(short_pci.ok());
  EXPECT_EQ(short_pci->device.value().value, "0000:3b:00.2");
  const Result<NetConf> sf = Parse(BaseWith("deviceID", "\"mlx5_core.sf.4\""));
  ASSERT_TRUE(sf.ok());
  EXPECT_EQ(sf->device.value().value, "mlx5_core.sf.4");
  EXPECT_EQ(sf->device.value().kind, DeviceKind::kAuxDevice);
}

// Multus injects deviceID and pciBusID from the pod's allocation whenever the NAD carries the
// resourceName annotation (which the injector reads): for a shared pool, its ID ("0".."N-1").
// A child link does not use it (warned, not refused); netdev mode refuses it, saying why.
TEST(CniNetConfTest, MultusInjectedSharedPoolIds) {
  json conf = BaseConf();
  conf["mode"] = "macvlan";
  conf["resourceName"] = "rdma/hca_shared_devices_a";
  conf["deviceID"] = "7";
  conf["pciBusID"] = "7";
  const Result<NetConf> child = Parse(conf);
  ASSERT_TRUE(child.ok()) << child.status().details();
  EXPECT_FALSE(child->device);
  EXPECT_EQ(child->warnings,
            (std::vector<std::string>{"deviceID: \"7\" is a shared pool's ID; a child link does "
                                      "not use it",
                                      "pciBusID: \"7\" is a shared pool's ID; a child link does "
                                      "not use it"}));
  conf["mode"] = "ipoib";
  conf.erase("deviceID");
  conf.erase("pciBusID");
  conf["runtimeConfig"] = {{"deviceID", "12"}};
  EXPECT_TRUE(Parse(conf).ok());
  conf["mode"] = "netdev";
  EXPECT_TRUE(FailsWith(Parse(conf), 7,
                        "runtimeConfig.deviceID: \"12\" is a shared pool's ID (a share of the "
                        "pool's HCAs), not a VF"));
  // Anything else that is no device name is still refused in a child link's config.
  conf["mode"] = "macvlan";
  conf["runtimeConfig"] = {{"deviceID", "../x"}};
  EXPECT_TRUE(FailsWith(Parse(conf), 7, "runtimeConfig.deviceID: must be a PCI address"));
}

TEST(CniNetConfTest, DeviceIdPrecedence) {
  json conf = BaseConf();
  conf["pciBusID"] = "0000:3b:00.3";
  conf["runtimeConfig"] = {{"deviceID", "0000:3b:00.4"}};
  const Result<NetConf> all = Parse(conf);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->device.value().value, "0000:3b:00.2");
  EXPECT_EQ(all->device.value().source, DeviceIdSource::kDeviceId);

  conf.erase("deviceID");
  const Result<NetConf> pci_bus = Parse(conf);
  ASSERT_TRUE(pci_bus.ok());
  EXPECT_EQ(pci_bus->device.value().value, "0000:3b:00.3");
  EXPECT_EQ(pci_bus->device.value().source, DeviceIdSource::kPciBusId);

  conf.erase("pciBusID");
  const Result<NetConf> runtime = Parse(conf);
  ASSERT_TRUE(runtime.ok());
  EXPECT_EQ(runtime->device.value().value, "0000:3b:00.4");
  EXPECT_EQ(runtime->device.value().source, DeviceIdSource::kRuntimeConfig);

  // An invalid deviceID is an error; there is no fall-back to the next source.
  json bad_first = BaseWith("deviceID", "\"../../etc\"");
  bad_first["pciBusID"] = "0000:3b:00.3";
  EXPECT_TRUE(FailsWith(Parse(bad_first), 7, "deviceID: must be a PCI address"));
  json bad_runtime = BaseConf();
  bad_runtime.erase("deviceID");
  bad_runtime["runtimeConfig"] = {{"deviceID", "../x"}};
  EXPECT_TRUE(FailsWith(Parse(bad_runtime), 7, "runtimeConfig.deviceID: must be a PCI address"));
}

TEST(CniNetConfTest, DeviceIdRequiredForAddWithoutResourceNameOnly) {
  json conf = BaseConf();
  conf.erase("deviceID");
  EXPECT_TRUE(FailsWith(Parse(conf), 7, "deviceID: required when there is no resourceName"));
  json by_resource = conf;
  by_resource["resourceName"] = "rdma/vf_pool_a";
  const Result<NetConf> add = Parse(by_resource);
  ASSERT_TRUE(add.ok());
  EXPECT_FALSE(add->device);
  EXPECT_EQ(add->resource_name, "rdma/vf_pool_a");
  json check = conf;
  check["prevResult"] = {{"cniVersion", "1.0.0"}};
  EXPECT_TRUE(Parse(check, Verb::kCheck).ok()) << "CHECK uses the device ADD recorded";
  const Result<NetConf> del = Parse(conf, Verb::kDel);
  ASSERT_TRUE(del.ok());
  EXPECT_FALSE(del->device);
  json status = conf;
  status["cniVersion"] = "1.1.0";
  EXPECT_TRUE(Parse(status, Verb::kStatus).ok());
}

TEST(CniNetConfTest, VlanRanges) {
  EXPECT_EQ(Parse(BaseWith("vlan", "0"))->vlan, 0);
  EXPECT_EQ(Parse(BaseWith("vlan", "4094"))->vlan, 4094);
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlan", "4095")), 7, "vlan: must be 0..4094, got 4095"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlan", "-1")), 7, "vlan: must be 0..4094, got -1"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlan", "18446744073709551615")), 7,
                        "vlan: must be 0..4094, got 18446744073709551615"));
  json qos = BaseWith("vlan", "10");
  qos["vlanQoS"] = 8;
  EXPECT_TRUE(FailsWith(Parse(qos), 7, "vlanQoS: must be 0..7, got 8"));
  qos["vlanQoS"] = 7;
  EXPECT_EQ(Parse(qos)->vlan_qos, 7);
}

TEST(CniNetConfTest, VlanCrossFieldRules) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlanQoS", "0")), 7, "vlanQoS: requires vlan"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlanProto", "\"802.1q\"")), 7, "vlanProto: requires vlan"));
  json untagged = BaseWith("vlan", "0");
  untagged["vlanQoS"] = 3;
  EXPECT_TRUE(FailsWith(Parse(untagged), 7, "vlanQoS: a non-zero QoS requires a non-zero vlan"));
  untagged["vlanQoS"] = 0;
  EXPECT_TRUE(Parse(untagged).ok());
  untagged["vlanProto"] = "802.1ad";
  EXPECT_TRUE(FailsWith(Parse(untagged), 7, "vlanProto: \"802.1ad\" requires a non-zero vlan"));
  untagged["vlanProto"] = "802.1Q";
  EXPECT_EQ(Parse(untagged)->vlan_proto, "802.1q");
  json proto = BaseWith("vlan", "100");
  proto["vlanProto"] = "802.1x";
  EXPECT_TRUE(
      FailsWith(Parse(proto), 7, "vlanProto: must be \"802.1q\" or \"802.1ad\", got \"802.1x\""));
  // An invalid vlan does not also produce "requires vlan".
  json invalid_vlan = BaseWith("vlan", "\"x\"");
  invalid_vlan["vlanQoS"] = 1;
  const Result<NetConf> parsed = Parse(invalid_vlan);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().details(), "vlan: must be an integer, got string \"x\"");
}

TEST(CniNetConfTest, MacMtuAndSwitches) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("mac", "\"aa:bb:cc:dd:ee\"")), 7,
                        "mac: must be six hex octets, as 02:00:00:00:00:01, 02-00-00-00-00-01 or "
                        "0200.0000.0001, got \"aa:bb:cc:dd:ee\""));
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("mac", "\"00:00:00:00:00:00\"")), 7, "mac: must not be all zeros"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("runtimeConfig", R"({"mac":"ff:ff:ff:ff:ff:ff"})")), 7,
                        "runtimeConfig.mac: must be a unicast address"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("mtu", "67")), 7, "mtu: must be 68..65535, got 67"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("mtu", "65536")), 7, "mtu: must be 68..65535, got 65536"));
  EXPECT_EQ(Parse(BaseWith("mtu", "68"))->mtu, 68);
  EXPECT_EQ(Parse(BaseWith("mtu", "65535"))->mtu, 65535);
  EXPECT_EQ(Parse(BaseWith("trust", "\"On\""))->trust, true);
  EXPECT_EQ(Parse(BaseWith("spoofchk", "\"off\""))->spoofchk, false);
  EXPECT_TRUE(FailsWith(Parse(BaseWith("trust", "\"enabled\"")), 7,
                        "trust: must be \"on\" or \"off\", got \"enabled\""));
  EXPECT_EQ(Parse(BaseWith("link_state", "\"auto\""))->link_state, LinkState::kAuto);
  EXPECT_EQ(Parse(BaseWith("link_state", "\"enable\""))->link_state, LinkState::kEnable);
  EXPECT_TRUE(FailsWith(Parse(BaseWith("link_state", "\"up\"")), 7,
                        "link_state: must be \"auto\", \"enable\" or \"disable\", got \"up\""));
}

TEST(CniNetConfTest, TxRates) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("min_tx_rate", "-1")), 7,
                        "min_tx_rate: must be 0..4294967295, got -1"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("max_tx_rate", "4294967296")), 7,
                        "max_tx_rate: must be 0..4294967295, got 4294967296"));
  json rates = BaseWith("min_tx_rate", "500");
  rates["max_tx_rate"] = 100;
  EXPECT_TRUE(FailsWith(Parse(rates), 7, "max_tx_rate: must be >= min_tx_rate (500), got 100"));
  rates["max_tx_rate"] = 0;  // no limit
  EXPECT_TRUE(Parse(rates).ok());
  rates["max_tx_rate"] = 500;
  EXPECT_EQ(Parse(rates)->max_tx_rate, 500);
  rates["min_tx_rate"] = 0;
  rates["max_tx_rate"] = 10;
  EXPECT_EQ(Parse(rates)->min_tx_rate, 0);
}

TEST(CniNetConfTest, Ipam) {
  const Result<NetConf> empty = Parse(BaseWith("ipam", "{}"));
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->ipam);
  EXPECT_EQ(empty->ipam_type, "");
  const Result<NetConf> whereabouts =
      Parse(BaseWith("ipam", R"({"type":"whereabouts","range":"10.0.0.0/16"})"));
  ASSERT_TRUE(whereabouts.ok());
  EXPECT_EQ(whereabouts->ipam_type, "whereabouts");
  EXPECT_EQ((*whereabouts->ipam)["range"], "10.0.0.0/16");
  const struct {
    const char* ipam;
    const char* detail;
  } cases[] = {
      {R"({"type":"/opt/cni/bin/host-local"})",
       "ipam.type: must be a plugin name, not a path, got \"/opt/cni/bin/host-local\""},
      {R"({"type":".."})", "ipam.type: must not be \".\" or \"..\", got \"..\""},
      {R"({"type":"."})", "ipam.type: must not be \".\" or \"..\", got \".\""},
      {R"({"type":""})", "ipam.type: is empty, got \"\""},
      {R"({"type":5})", "ipam.type: must be a string, got number 5"},
  };
  for (const auto& c : cases) {
    const Result<NetConf> parsed = Parse(BaseWith("ipam", c.ipam));
    ASSERT_FALSE(parsed.ok()) << c.ipam;
    EXPECT_EQ(CniCodeOf(parsed.status()), 7);
    EXPECT_EQ(parsed.status().details(), c.detail);
  }
}

TEST(CniNetConfTest, HostPathsAndLogging) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("stateDir", "\"state\"")), 7,
                        "stateDir: must be an absolute path, got \"state\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("kubeletRootDir", "\"/var/lib/../../etc\"")), 7,
                        "kubeletRootDir: must not contain a \"..\" component"));
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("hostRoot", "\"host\"")), 7, "hostRoot: must be an absolute"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("logFile", "\"cni.log\"")), 7,
                        "logFile: must be an absolute path, got \"cni.log\""));
  EXPECT_EQ(Parse(BaseWith("logLevel", "\"debug\""))->log_level, LogLevel::kDebug);
  // An unknown level is a warning (sriov-cni falls back to info), not an error.
  const Result<NetConf> verbose = Parse(BaseWith("logLevel", "\"verbose\""));
  ASSERT_TRUE(verbose.ok());
  EXPECT_FALSE(verbose->log_level);
  EXPECT_EQ(verbose->warnings,
            (std::vector<std::string>{"logLevel: unknown level \"verbose\"; using info"}));
}

// runtimeConfig.CNIDeviceInfoFile may name a file directly in the node's device-info
// directory only (Multus's, by default): a NAD's own runtimeConfig reaches the plugin
// whenever libcni injects no capability, and root writes that file at ADD.
TEST(CniNetConfTest, DeviceInfoFileOnlyInTheDeviceInfoDirectory) {
  const auto with_file = [](const std::string& file) {
    json conf = BaseConf();
    conf["runtimeConfig"] = {{"CNIDeviceInfoFile", file}};
    return conf;
  };
  const std::string multus =
      "/var/run/k8s.cni.cncf.io/devinfo/cni/team-a-rdma-vf-8f3c9a0b1d2e_net1";
  const Result<NetConf> ok = Parse(with_file(multus));
  ASSERT_TRUE(ok.ok()) << ok.status().details();
  EXPECT_EQ(ok->device_info_file, multus);
  EXPECT_TRUE(Parse(with_file("/var/run/k8s.cni.cncf.io/devinfo/cni//x.json")).ok());
  for (const std::string bad :
       {"/etc/ld.so.preload", "/var/run/k8s.cni.cncf.io/devinfo/cni",
        "/var/run/k8s.cni.cncf.io/devinfo/cni/sub/x.json", "/run/k8s.cni.cncf.io/devinfo/cni/x",
        "/var/run/k8s.cni.cncf.io/devinfo/dp/x.json"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(FailsWith(Parse(with_file(bad)), 7,
                          "runtimeConfig.CNIDeviceInfoFile: \"" + bad +
                              "\" is not a file directly in this node's device-info directory "
                              "\"/var/run/k8s.cni.cncf.io/devinfo/cni\""));
    // DEL acts on what ADD recorded: never stuck on it.
    const Result<NetConf> del = Parse(with_file(bad), Verb::kDel);
    ASSERT_TRUE(del.ok()) << del.status().details();
    EXPECT_FALSE(del->device_info_file);
    ASSERT_EQ(del->warnings.size(), 1u);
    EXPECT_NE(del->warnings[0].find("; ignored"), std::string::npos);
  }
  // The node file moves the directory.
  NodeSettings node = DefaultNodeSettings();
  node.device_info_dir = "/run/devinfo";
  EXPECT_TRUE(ParseNetConf(with_file("/run/devinfo/x.json").dump(), Verb::kAdd, node).ok());
  EXPECT_FALSE(ParseNetConf(with_file(multus).dump(), Verb::kAdd, node).ok());
}

TEST(CniNetConfTest, TypoWarnings) {
  json conf = BaseConf();
  conf["vlan"] = 10;
  conf["vlanQos"] = 3;
  conf["MTU"] = 9000;
  conf["spoofChk"] = "on";
  conf["completelyUnrelatedKey"] = 1;
  conf["cniVersions"] = {"1.0.0"};
  conf["disableCheck"] = true;
  const Result<NetConf> parsed = Parse(conf);
  ASSERT_TRUE(parsed.ok()) << parsed.status().details();
  EXPECT_EQ(parsed->warnings, (std::vector<std::string>{
                                  "unknown key \"MTU\"; did you mean \"mtu\"?",
                                  "unknown key \"spoofChk\"; did you mean \"spoofchk\"?",
                                  "unknown key \"vlanQos\"; did you mean \"vlanQoS\"?",
                              }));
  // The misspelt keys are not applied.
  EXPECT_FALSE(parsed->vlan_qos);
  EXPECT_FALSE(parsed->mtu);
  EXPECT_FALSE(parsed->spoofchk);
}

TEST(CniNetConfTest, PrevResultAndRuntimeConfigArePreserved) {
  const json prev = json::parse(R"({"cniVersion":"1.0.0",
      "interfaces":[{"name":"net1","mac":"0a:00:00:00:00:01","sandbox":"/var/run/netns/x"}],
      "ips":[{"address":"10.1.2.3/24","gateway":"10.1.2.1","interface":0}],
      "dns":{"nameservers":["10.1.2.1"]}, "custom":{"kept":[1,2,3]}})");
  json conf = BaseConf();
  conf["prevResult"] = prev;
  conf["runtimeConfig"] = {{"ips", {"10.1.2.3/24"}}, {"portMappings", json::array()}};
  conf["capabilities"] = "tolerated even when odd";
  const Result<NetConf> parsed = Parse(conf, Verb::kCheck);
  ASSERT_TRUE(parsed.ok()) << parsed.status().details();
  EXPECT_EQ(parsed->prev_result, prev);
  EXPECT_EQ(parsed->runtime_config, conf["runtimeConfig"]);
  EXPECT_EQ(parsed->raw, conf);

  conf.erase("prevResult");
  EXPECT_TRUE(FailsWith(Parse(conf, Verb::kCheck), 7, "prevResult: required"));
  EXPECT_TRUE(Parse(conf, Verb::kAdd).ok());
}

TEST(CniNetConfTest, GcValidAttachments) {
  json conf = BaseConf();
  conf["cniVersion"] = "1.1.0";
  conf.erase("deviceID");
  EXPECT_TRUE(FailsWith(Parse(conf, Verb::kGc), 7, "cni.dev/valid-attachments: required"));
  conf["cni.dev/valid-attachments"] =
      json::parse(R"([{"containerID":"c1","ifname":"net1"},{"containerID":"c2","ifname":"net2"}])");
  const Result<NetConf> gc = Parse(conf, Verb::kGc);
  ASSERT_TRUE(gc.ok()) << gc.status().details();
  ASSERT_TRUE(gc->valid_attachments);
  ASSERT_EQ(gc->valid_attachments->size(), 2u);
  EXPECT_EQ((*gc->valid_attachments)[1].container_id, "c2");
  EXPECT_EQ((*gc->valid_attachments)[1].ifname, "net2");
  conf["cni.dev/valid-attachments"] = json::parse(R"([] )");
  const Result<NetConf> none = Parse(conf, Verb::kGc);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->valid_attachments->empty());
  conf["cni.dev/valid-attachments"] = json::parse(R"([{"containerID":"c1"}, 5])");
  const Result<NetConf> bad = Parse(conf, Verb::kGc);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(CniCodeOf(bad.status()), 7);
  EXPECT_EQ(bad.status().details(),
            "cni.dev/valid-attachments[0].ifname: required; "
            "cni.dev/valid-attachments[1]: must be an object, got number 5");
}

TEST(CniNetConfTest, MacPrecedence) {
  json conf = BaseWith("mac", "\"0a:00:00:00:00:03\"");
  const std::map<std::string, std::string> args_mac = {{"MAC", "0A:00:00:00:00:02"}};
  const Result<NetConf> config_only = Parse(conf);
  ASSERT_TRUE(config_only.ok());
  EXPECT_EQ(*SelectMac(*config_only, {}), "0a:00:00:00:00:03");
  EXPECT_EQ(*SelectMac(*config_only, args_mac), "0a:00:00:00:00:02");
  conf["runtimeConfig"] = {{"mac", "0a:00:00:00:00:01"}};
  const Result<NetConf> with_runtime = Parse(conf);
  ASSERT_TRUE(with_runtime.ok());
  EXPECT_EQ(*SelectMac(*with_runtime, args_mac), "0a:00:00:00:00:01");
  const Result<NetConf> none = Parse(BaseConf());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(SelectMac(*none, {})->has_value());
  EXPECT_TRUE(FailsWith(SelectMac(*config_only, {{"MAC", "01:00:00:00:00:01"}}), 4,
                        "CNI_ARGS MAC \"01:00:00:00:00:01\": must be a unicast address"));
  // A pod's network "mac" as Multus passes it on, unchanged, in both places.
  conf["runtimeConfig"] = {{"mac", "0A-00-00-00-00-04"}};
  EXPECT_EQ(*SelectMac(*Parse(conf), {}), "0a:00:00:00:00:04");
  EXPECT_EQ(*SelectMac(*config_only, {{"MAC", "0a00.0000.0005"}}), "0a:00:00:00:00:05");
}

// ib-sriov-cni's GUID: eight hex bytes, neither all zeros nor all ones; runtimeConfig's
// infinibandGUID, then CNI_ARGS "guid", then "guid".
TEST(CniNetConfTest, GuidSyntaxAndPrecedence) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("guid", "\"02:00:00:00:00:00:01\"")), 7,
                        "guid: GUID \"02:00:00:00:00:00:01\" must be eight hex octets, as "
                        "02:00:00:00:00:00:00:01, 02-00-00-00-00-00-00-01 or 0200.0000.0000.0001"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("guid", "\"02:00:00:00:00:01\"")), 7,
                        "guid: GUID \"02:00:00:00:00:01\" must be eight hex octets"));
  // ib-sriov-cni reads GUIDs with Go's net.ParseMAC: its other forms are the same GUID.
  EXPECT_EQ(Parse(BaseWith("guid", "\"02-00-00-00-00-00-00-0A\""))->guid,
            "02:00:00:00:00:00:00:0a");
  EXPECT_EQ(Parse(BaseWith("guid", "\"0200.0000.0000.000a\""))->guid, "02:00:00:00:00:00:00:0a");
  EXPECT_TRUE(FailsWith(Parse(BaseWith("guid", "\"00:00:00:00:00:00:00:00\"")), 7,
                        "guid: GUID \"00:00:00:00:00:00:00:00\" is all zeros"));
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("runtimeConfig", R"({"infinibandGUID":"FF:FF:FF:FF:FF:FF:FF:FF"})")),
                7, "runtimeConfig.infinibandGUID: GUID \"FF:FF:FF:FF:FF:FF:FF:FF\" is all ones"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("guid", "5")), 7, "guid: must be a string, got number 5"));

  json conf = BaseWith("guid", "\"02:00:00:00:00:00:00:0C\"");
  const std::map<std::string, std::string> args = {{"guid", "02:00:00:00:00:00:00:0B"}};
  const Result<NetConf> config_only = Parse(conf);
  ASSERT_TRUE(config_only.ok());
  EXPECT_EQ(*SelectGuid(*config_only, {}), "02:00:00:00:00:00:00:0c");
  EXPECT_EQ(*SelectGuid(*config_only, args), "02:00:00:00:00:00:00:0b");
  conf["runtimeConfig"] = {{"infinibandGUID", "02:00:00:00:00:00:00:0a"}};
  const Result<NetConf> with_runtime = Parse(conf);
  ASSERT_TRUE(with_runtime.ok());
  EXPECT_EQ(*SelectGuid(*with_runtime, args), "02:00:00:00:00:00:00:0a");
  EXPECT_FALSE(SelectGuid(*Parse(BaseConf()), {})->has_value());
  EXPECT_TRUE(FailsWith(SelectGuid(*config_only, {{"guid", "00:00:00:00:00:00:00:00"}}), 4,
                        "CNI_ARGS guid \"00:00:00:00:00:00:00:00\": GUID"));
}

// The configuration exactly as Multus hands it to the plugin for a pod whose network
// selection element ib-kubernetes has filled in: "cni-args" merged into "args.cni" (with
// the runtime's capability args beside it). ib-sriov-cni reads its GUID there, after
// runtimeConfig.infinibandGUID; hcashare's own sources come after both.
TEST(CniNetConfTest, IbKubernetesGuidFromArgsCni) {
  const json multus = json::parse(R"({
    "cniVersion": "1.0.0", "name": "ib-vf-a", "type": "hcashare-cni",
    "capabilities": {"infinibandGUID": true}, "ibKubernetesEnabled": true,
    "guid": "02:00:00:00:00:00:00:0c",
    "args": {"cni": {"guid": "02:00:00:00:00:00:00:5B",
                     "mellanox.infiniband.app": "configured"}},
    "deviceID": "0000:3b:00.2", "pciBusID": "0000:3b:00.2"})");
  const Result<NetConf> conf = Parse(multus);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_TRUE(conf->ib_kubernetes_enabled);
  EXPECT_EQ(conf->ib_kubernetes_state, "configured");
  const std::map<std::string, std::string> args = {{"guid", "02:00:00:00:00:00:00:0b"}};
  EXPECT_EQ(*SelectGuid(*conf, args), "02:00:00:00:00:00:00:5b");
  EXPECT_TRUE(CheckIbKubernetes(*conf).ok());
  json with_runtime = multus;
  with_runtime["runtimeConfig"] = {{"infinibandGUID", "02:00:00:00:00:00:00:0a"}};
  EXPECT_EQ(*SelectGuid(*Parse(with_runtime), args), "02:00:00:00:00:00:00:0a");

  // Not configured yet, or no GUID from ib-kubernetes: try again later, whatever else is set.
  for (const char* state : {"", "pending"}) {
    json early = multus;
    if (*state == '\0') {
      early["args"]["cni"].erase(kIbKubernetesKey);
    } else {
      early["args"]["cni"][kIbKubernetesKey] = state;
    }
    const Status st = CheckIbKubernetes(*Parse(early));
    EXPECT_EQ(CniCodeOf(st), 11) << state;
    EXPECT_NE(st.details().find(*state ? "is \"pending\", not \"configured\"" : "is absent"),
              std::string::npos)
        << st.details();
  }
  json no_guid = multus;
  no_guid["args"]["cni"].erase("guid");
  const Status st = CheckIbKubernetes(*Parse(no_guid));
  EXPECT_EQ(CniCodeOf(st), 11);
  EXPECT_EQ(st.message(), "ib-kubernetes gave this pod's network no GUID");
  // Without ibKubernetesEnabled nothing waits; args.cni.guid still counts.
  no_guid.erase("ibKubernetesEnabled");
  EXPECT_TRUE(CheckIbKubernetes(*Parse(no_guid)).ok());

  // Our keys in args.cni are checked; other keys and shapes are another plugin's.
  json bad = multus;
  bad["args"]["cni"]["guid"] = "02:00";
  EXPECT_TRUE(FailsWith(Parse(bad), 7, "args.cni.guid: GUID \"02:00\" must be eight hex octets"));
  bad["args"]["cni"]["guid"] = 5;
  EXPECT_TRUE(FailsWith(Parse(bad), 7, "args.cni.guid: must be a string, got number 5"));
  for (const char* other : {R"({"cni": {"debug": true, "level": 3}})", R"({"cni": "x"})",
                            R"({"other": {"guid": 5}})", R"("x")", "[1]"}) {
    json shape = BaseConf();
    shape["args"] = json::parse(other);
    const Result<NetConf> ok = Parse(shape);
    ASSERT_TRUE(ok.ok()) << other << ": " << ok.status().ToString();
    EXPECT_FALSE(ok->args_guid) << other;
  }
  EXPECT_TRUE(FailsWith(Parse(BaseWith("ibKubernetesEnabled", "\"yes\"")), 7,
                        "ibKubernetesEnabled: must be a boolean"));
}

// GPU-aware choice: gpuResources (default the NVIDIA device plugin's) and gpuRails.
TEST(CniNetConfTest, GpuAffinityKeys) {
  const Result<NetConf> plain = Parse(BaseConf());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->gpu_resources, std::vector<std::string>{"nvidia.com/gpu"});
  EXPECT_FALSE(plain->gpu_rails);
  json rails = BaseWith("gpuRails", "true");
  EXPECT_TRUE(FailsWith(Parse(rails), 7, "gpuRails: requires resourceName"));
  rails["resourceName"] = "rdma/vfs";
  ASSERT_TRUE(Parse(rails).ok());
  EXPECT_TRUE(Parse(rails)->gpu_rails);
  EXPECT_EQ(Parse(BaseWith("gpuResources", R"(["example.com/gpu"])"))->gpu_resources,
            std::vector<std::string>{"example.com/gpu"});
  EXPECT_TRUE(FailsWith(Parse(BaseWith("gpuResources", R"(["nvidia.com/gpu", "no slash"])")), 7,
                        "gpuResources[1]: "));
  json many = BaseConf();
  many["gpuResources"] = std::vector<std::string>(17, "a.b/c");
  EXPECT_TRUE(FailsWith(Parse(many), 7, "gpuResources: at most 16 resources, got 17"));
}

// ---------------------------------------------------------------------------------------
// JSON field helpers (config/json_fields.h, the reader the device plugin's configuration
// uses too)

TEST(CniJsonFieldsTest, PathsAndDescriptions) {
  using config::DescribeValue;
  EXPECT_EQ(config::JoinKey("", "vlan"), "vlan");
  EXPECT_EQ(config::JoinKey("ipam", "type"), "ipam.type");
  EXPECT_EQ(config::JoinIndex("ips", 2), "ips[2]");
  // A top-level key is written as it is; below the top, one that is not identifier-like is
  // quoted (as in the device plugin's "$.configList[0]" paths).
  EXPECT_EQ(config::JoinKey("", "cni.dev/valid-attachments"), "cni.dev/valid-attachments");
  EXPECT_EQ(config::JoinKey("runtimeConfig", "a b"), "runtimeConfig[\"a b\"]");
  EXPECT_EQ(DescribeValue(json("5")), "string \"5\"");
  EXPECT_EQ(DescribeValue(json(5.5)), "number 5.5");
  EXPECT_EQ(DescribeValue(json(true)), "boolean true");
  EXPECT_EQ(DescribeValue(json(nullptr)), "null");
  EXPECT_EQ(DescribeValue(json::object()), "object");
  EXPECT_EQ(DescribeValue(json::array()), "array");
  EXPECT_EQ(DescribeValue(json(std::string(200, 'a'))).size(),
            std::string("string \"").size() + 80 + 4);
}

}  // namespace
}  // namespace hcashare::cni
