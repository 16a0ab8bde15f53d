// dra/claim_config.h: which config entries apply to which allocation result (all, named
// requests, a parent covering its subrequests), their order, and the interface names a pod
// can take.
#include "dra/claim_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hcashare::dra {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kDriver[] = "rdma.hcashare.io";

json Entry(const json& parameters, const json& requests = json::array()) {
  json e = {{"source", "FromClaim"}, {"opaque", {{"driver", kDriver}, {"parameters", parameters}}}};
  if (!requests.empty()) e["requests"] = requests;
  return e;
}

TEST(ClaimConfigTest, NoConfigLeavesEveryDeviceToTheDefaults) {
  auto out = ResolvePodInterfaces(json(), kDriver, {{"nic", "d0"}});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)[0].name.has_value());
  EXPECT_FALSE((*out)[0].mtu.has_value());
}

TEST(ClaimConfigTest, AParentRequestCoversItsSubrequestsAndLaterEntriesWin) {
  const json config =
      json::array({Entry({{"interface", {{"mtu", 1500}}}}),
                   Entry({{"interface", {{"mtu", 9000}, {"name", "fast0"}}}}, json::array({"nic"})),
                   Entry({{"interface", {{"mtu", 4000}}}}, json::array({"other"}))});
  auto out = ResolvePodInterfaces(config, kDriver, {{"nic/fast", "d0"}, {"other", "d1"}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].name, "fast0");
  EXPECT_EQ((*out)[0].mtu, 9000);
  EXPECT_FALSE((*out)[1].name.has_value());
  EXPECT_EQ((*out)[1].mtu, 4000);
}

TEST(ClaimConfigTest, TwoSharesOfOneDeviceMayShareItsName) {
  const json config = json::array({Entry({{"interface", {{"name", "rdma0"}}}})});
  auto out = ResolvePodInterfaces(config, kDriver, {{"a", "d0"}, {"b", "d0"}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[1].name, "rdma0");
}

TEST(ClaimConfigTest, OneNameForTwoDevicesFromTwoEntriesIsRefused) {
  const json config =
      json::array({Entry({{"interface", {{"name", "rdma0"}}}}, json::array({"a"})),
                   Entry({{"interface", {{"name", "rdma0"}}}}, json::array({"b"}))});
  auto out = ResolvePodInterfaces(config, kDriver, {{"a", "d0"}, {"b", "d1"}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("\"rdma0\" is given to two devices"));
}

TEST(ClaimConfigTest, NamesAPodCannotTakeAreRefused) {
  for (const char* bad : {"", "eth0", "lo", ".", "..", "a b", "a:b", "sixteen-chars-xx", "a\tb"}) {
    EXPECT_NE(CheckPodInterfaceName(bad), "") << "\"" << bad << "\"";
  }
  for (const char* good : {"rdma0", "net1", "ib0.8001", "fifteen-chars-x"}) {
    EXPECT_EQ(CheckPodInterfaceName(good), "") << good;
  }
  const json config = json::array({Entry({{"kind", "Other"}, {"interface", "x"}})});
  auto out = ResolvePodInterfaces(config, kDriver, {{"a", "d0"}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("parameters.kind: must be \"PodInterface\""));
  EXPECT_THAT(out.status().message(), HasSubstr("parameters.interface: not an object"));
}

TEST(ClaimConfigTest, AddressesAreCidrsOfOneDevice) {
  const json ok = json::array(
      {Entry({{"interface", {{"addresses", {"10.0.0.5/24", "fd00::5/64"}}}}}, json::array({"a"}))});
  auto out = ResolvePodInterfaces(ok, kDriver, {{"a", "d0"}, {"b", "d1"}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].addresses, (std::vector<std::string>{"10.0.0.5/24", "fd00::5/64"}));
  EXPECT_FALSE((*out)[1].addresses.has_value());
  for (const json& bad : {json({"10.0.0.5"}), json({"10.0.0.5/33"}), json({"x/24"}), json("a"),
                          json(std::vector<std::string>(17, "10.0.0.1/8"))}) {
    auto refused = ResolvePodInterfaces(json::array({Entry({{"interface", {{"addresses", bad}}}})}),
                                        kDriver, {{"a", "d0"}});
    EXPECT_FALSE(refused.ok()) << bad.dump();
  }
  auto two =
      ResolvePodInterfaces(json::array({Entry({{"interface", {{"addresses", {"10.0.0.5/24"}}}}})}),
                           kDriver, {{"a", "d0"}, {"b", "d1"}});
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(),
              HasSubstr("interface.addresses: are one interface's but applies to 2 devices"));
}

TEST(ClaimConfigTest, TooManyEntriesAreRefused) {
  const json config = json(std::vector<json>(kMaxClaimConfigs + 1, Entry(json::object())));
  EXPECT_FALSE(ResolvePodInterfaces(config, kDriver, {{"a", "d0"}}).ok());
}

}  // namespace
}  // namespace hcashare::dra
