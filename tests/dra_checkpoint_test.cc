// The DRA driver's node checkpoint (interop/dra_checkpoint.h), the per-claim CDI names
// (dra/cdi_claim.h) and the Preparer's bounds against an in-memory ClaimSource
// (dra/prepare.h). The gRPC side is in dra_node_test.cc.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "dra/cdi_claim.h"
#include "dra/prepare.h"
#include "interop/dra_checkpoint.h"

namespace hcashare::dra {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

PreparedClaim SampleClaim(const std::string& uid, const std::string& device,
                          const std::string& pci) {
  PreparedClaim c;
  c.uid = uid;
  c.namespace_name = "ml";
  c.name = "claim-" + uid;
  c.cdi_spec_path = "/var/run/cdi/hcashare-dra-rdma_hcashare_io-" + uid + ".json";
  PreparedDevice d;
  d.request_names = {"nic"};
  d.pool = "node-a";
  d.device = device;
  d.pci_address = pci;
  d.rdma_devices = {"mlx5_2"};
  d.cdi_device_ids = {ClaimCdiDeviceId("rdma.hcashare.io", uid, device)};
  c.devices.push_back(d);
  return c;
}

class CheckpointTest : public ::testing::Test {
 protected:
  std::string Path() const { return tmp_.path() + "/plugins/rdma.hcashare.io/checkpoint.json"; }
  TempDir tmp_;
};

TEST_F(CheckpointTest, AbsentFileIsEmpty) {
  Result<Checkpoint> cp = Checkpoint::Load(Path());
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  EXPECT_TRUE(cp->claims().empty());
  EXPECT_EQ(cp->Find("u1"), nullptr);
}

TEST_F(CheckpointTest, RoundTripsThroughTheFile) {
  Checkpoint cp(Path());
  PreparedClaim a = SampleClaim("u1", "pci-0000-3b-00-0", "0000:3b:00.0");
  PreparedClaim b = SampleClaim("u2", "shared-0000-3a-00-0", "0000:3a:00.0");
  b.devices[0].share_id = "share-7";
  b.devices[0].request_names.clear();
  ASSERT_TRUE(cp.Put(a).ok());  // creates the directories
  ASSERT_TRUE(cp.Put(b).ok());
  struct stat st {};
  ASSERT_EQ(::stat(Path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  Result<Checkpoint> back = Checkpoint::Load(Path());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->claims().size(), 2u);
  EXPECT_EQ(*back->Find("u1"), a);
  EXPECT_EQ(*back->Find("u2"), b);
  EXPECT_EQ(back->PciAddressOf("node-a", "pci-0000-3b-00-0"), "0000:3b:00.0");
  EXPECT_EQ(back->PciAddressOf("node-a", "shared-0000-3a-00-0"), "0000:3a:00.0");
  EXPECT_EQ(back->PciAddressOf("node-b", "pci-0000-3b-00-0"), std::nullopt);
  EXPECT_EQ(back->PciAddressOf("node-a", "pci-0000-5e-00-0"), std::nullopt);

  ASSERT_TRUE(back->Erase("u1").ok());
  ASSERT_TRUE(back->Erase("never-there").ok());
  Result<Checkpoint> again = Checkpoint::Load(Path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Find("u1"), nullptr);
  EXPECT_NE(again->Find("u2"), nullptr);
}

TEST_F(CheckpointTest, CorruptFileIsAnErrorAndLeftAsItIs) {
  Checkpoint cp(Path());
  ASSERT_TRUE(cp.Put(SampleClaim("u1", "pci-0000-3b-00-0", "0000:3b:00.0")).ok());
  const std::string garbage = ReadAll(Path()).substr(0, 40);  // cut mid-way
  WriteAll(Path(), garbage);
  Result<Checkpoint> back = Checkpoint::Load(Path());
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(back.status().message(), HasSubstr(Path()));
  EXPECT_THAT(back.status().message(), HasSubstr("corrupt"));
  EXPECT_EQ(ReadAll(Path()), garbage);
}

TEST_F(CheckpointTest, WrongShapesNameWhatIsWrong) {
  Checkpoint cp(Path());
  ASSERT_TRUE(cp.Put(SampleClaim("u1", "pci-0000-3b-00-0", "0000:3b:00.0")).ok());
  const json good = json::parse(ReadAll(Path()));

  json v2 = good;
  v2["version"] = 2;
  auto r = Checkpoint::Parse(v2.dump(), "cp");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("$.version: 2"));

  json no_pool = good;
  no_pool["claims"]["u1"]["devices"][0].erase("pool");
  r = Checkpoint::Parse(no_pool.dump(), "cp");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("$.claims[\"u1\"].devices[0].pool: missing"));

  json bad_ids = good;
  bad_ids["claims"]["u1"]["devices"][0]["cdiDeviceIds"] = {1, 2};
  r = Checkpoint::Parse(bad_ids.dump(), "cp");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("cdiDeviceIds[0]: not a string"));

  r = Checkpoint::Parse("[]", "cp");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not a JSON object"));
  EXPECT_TRUE(Checkpoint::Parse(good.dump(), "cp").ok());
}

TEST_F(CheckpointTest, OversizedFileIsRefused) {
  ASSERT_TRUE(Checkpoint(Path()).Put(SampleClaim("u1", "d", "p")).ok());
  WriteAll(Path(), std::string(kMaxCheckpointBytes + 1, ' '));
  Result<Checkpoint> back = Checkpoint::Load(Path());
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(back.status().message(), HasSubstr(std::to_string(kMaxCheckpointBytes)));
}

TEST_F(CheckpointTest, FailedWriteLeavesTheCheckpointUnchanged) {
  // The directory's place is taken by a file: nothing can be written below it.
  WriteAll(tmp_.path() + "/plugins", "not a directory");
  Checkpoint cp(Path());
  Status st = cp.Put(SampleClaim("u1", "d", "p"));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("DRA checkpoint"));
  EXPECT_EQ(cp.Find("u1"), nullptr);
}

TEST(ClaimCdiNames, FollowTheDesign) {
  EXPECT_EQ(ClaimCdiKind("rdma.hcashare.io"), "rdma.hcashare.io/claim");
  EXPECT_EQ(ClaimCdiDeviceId("rdma.hcashare.io", "u-1", "pci-0000-3b-00-0"),
            "rdma.hcashare.io/claim=u-1-pci-0000-3b-00-0");
  EXPECT_EQ(ClaimCdiSpecFileName("rdma.hcashare.io", "u-1"),
            "hcashare-dra-rdma_hcashare_io-u-1.json");
}

TEST(CheckClaimRef, RefusesWhatCannotBeAPathOrAFileName) {
  EXPECT_TRUE(CheckClaimRef({"ml", "0a1b-2c", "job.nic-0"}).ok());
  const std::vector<ClaimRef> bad = {
      {"ml", "", "a"},       {"ml", "../etc", "a"}, {"ml", std::string(65, 'a'), "a"},
      {"ML", "u", "a"},      {"m/l", "u", "a"},     {"", "u", "a"},
      {"ml", "u", "a/../b"}, {"ml", "u", ""},       {"ml", "u", std::string(254, 'a')},
      {"ml", "u", "-a"}};
  for (const auto& ref : bad) {
    Status st = CheckClaimRef(ref);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument)
        << ref.namespace_name << "/" << ref.name << " " << ref.uid;
  }
}

// A ClaimSource over a map of JSON texts, counting reads.
class MapClaimSource : public ClaimSource {
 public:
  Result<std::string> GetClaim(const std::string& ns, const std::string& name) override {
    ++gets;
    auto it = claims.find(ns + "/" + name);
    if (it == claims.end()) return Status::NotFound("no claim " + ns + "/" + name);
    return it->second;
  }
  std::map<std::string, std::string> claims;
  int gets = 0;
};

json ClaimJson(const std::string& uid, const json& results) {
  return {{"metadata", {{"name", "c"}, {"namespace", "ml"}, {"uid", uid}}},
          {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
}

json OurResult(const std::string& device) {
  return {
      {"request", "nic"}, {"driver", "rdma.hcashare.io"}, {"pool", "node-a"}, {"device", device}};
}

class PreparerBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PreparerOptions o;
    o.driver = "rdma.hcashare.io";
    o.pool = "node-a";
    o.cdi_dir = tmp_.path() + "/cdi";
    o.checkpoint_path = tmp_.path() + "/checkpoint.json";
    o.owner = tmp_.path();
    auto p = Preparer::Create(o, &source_, [](const std::string&, const std::string& dev) {
      return std::optional<PreparableDevice>(PreparableDevice{
          dev, "rdma/hca", "0000:3b:00.0", {"mlx5_0"}, {"/dev/infiniband/uverbs0"}});
    });
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    preparer_ = std::move(*p);
  }
  std::string Error(const std::string& uid) {
    auto out = preparer_->Prepare({{"ml", uid, "c"}});
    EXPECT_TRUE(out.ok());
    return out.ok() ? (*out)[uid].error : "";
  }

  TempDir tmp_;
  MapClaimSource source_;
  std::unique_ptr<Preparer> preparer_;
};

TEST_F(PreparerBoundsTest, TooManyClaimsFailTheRequest) {
  std::vector<ClaimRef> refs(kMaxClaimsPerRequest + 1, ClaimRef{"ml", "u", "c"});
  auto out = preparer_->Prepare(refs);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr(std::to_string(kMaxClaimsPerRequest)));
  EXPECT_FALSE(preparer_->Unprepare(refs).ok());
  EXPECT_EQ(source_.gets, 0);
}

TEST_F(PreparerBoundsTest, OversizedAndMalformedClaimsFailOnlyThemselves) {
  json big = ClaimJson("u1", json::array({OurResult("pci-0000-3b-00-0")}));
  big["metadata"]["annotations"] = {{"pad", std::string(kMaxClaimBytes, 'x')}};
  source_.claims["ml/c"] = big.dump();
  EXPECT_THAT(Error("u1"), HasSubstr("larger than"));

  source_.claims["ml/c"] = "{\"metadata\": ";
  EXPECT_THAT(Error("u1"), HasSubstr("not valid JSON"));

  json many = json::array();
  for (size_t i = 0; i <= kMaxDevicesPerClaim; ++i)
    many.push_back(OurResult("d" + std::to_string(i)));
  source_.claims["ml/c"] = ClaimJson("u1", many).dump();
  EXPECT_THAT(Error("u1"), HasSubstr("more than " + std::to_string(kMaxDevicesPerClaim)));

  json unallocated = ClaimJson("u1", json::array());
  unallocated["status"].erase("allocation");
  source_.claims["ml/c"] = unallocated.dump();
  EXPECT_THAT(Error("u1"), HasSubstr("not allocated"));

  EXPECT_THAT(Error("bad/uid"), HasSubstr("claim UID"));
  EXPECT_FALSE(preparer_->Prepared("u1").has_value());
}

TEST_F(PreparerBoundsTest, ClaimsPastTheDeadlineFailWithoutAnApiCall) {
  source_.claims["ml/c"] = ClaimJson("u1", json::array({OurResult("pci-0000-3b-00-0")})).dump();
  auto out = preparer_->Prepare({{"ml", "u1", "c"}},
                                std::chrono::steady_clock::now() - std::chrono::seconds(1));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT((*out)["u1"].error, HasSubstr("deadline has passed"));
  EXPECT_EQ(source_.gets, 0);
  out = preparer_->Prepare({{"ml", "u1", "c"}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)["u1"].error, "");
  ASSERT_EQ((*out)["u1"].devices.size(), 1u);
  EXPECT_EQ((*out)["u1"].devices[0].pci_address, "0000:3b:00.0");
  EXPECT_EQ(source_.gets, 1);
}

}  // namespace
}  // namespace hcashare::dra
