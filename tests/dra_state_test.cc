// The DRA driver's state over time (issue 33, part 4): one instance per checkpoint (its
// lock), a checkpoint that cannot be read kept aside and rebuilt from what the kubelet's
// pod-resources reports (a real gRPC server on a unix socket), a Prepare that its Unprepare
// overtakes not written back, and collection of entries no pod holds: 10,000 abandoned
// claims, collected while the held ones keep working.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "dra/cdi_claim.h"
#include "dra/prepare.h"
#include "interop/dra_checkpoint.h"
#include "kubelet/podresources.h"
#include "testing/fake_podresources.h"
#include "tests/test_util.h"

namespace hcashare::dra {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kDriver = "rdma.hcashare.io";
constexpr const char* kPool = "node-a";

using testing::ReadTextFile;

void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Claims by "ns/name"; GetClaim may be held at a gate (for the race with Unprepare).
class GatedClaims : public ClaimSource {
 public:
  Result<std::string> GetClaim(const std::string& ns, const std::string& name) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++gets_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
    auto it = claims_.find(ns + "/" + name);
    if (it == claims_.end()) return Status::NotFound("resourceclaims \"" + name + "\" not found");
    return it->second;
  }
  // Adds claim ns/name with one result per device; its UID.
  std::string Add(const std::string& ns, const std::string& name,
                  const std::vector<std::string>& devices) {
    const std::string uid = "0000aaaa-0000-4000-8000-" + std::to_string(100000000000 + next_++);
    json results = json::array();
    for (const auto& d : devices) {
      results.push_back({{"request", "nic"}, {"driver", kDriver}, {"pool", kPool}, {"device", d}});
    }
    json claim = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
                  {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
    std::lock_guard<std::mutex> lock(mu_);
    claims_[ns + "/" + name] = claim.dump();
    return uid;
  }
  void Remove(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    claims_.erase(ns + "/" + name);
  }
  void SetOpen(bool open) {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = open;
    cv_.notify_all();
  }
  void WaitGets(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return gets_ >= n; });
  }
  int gets() {
    std::lock_guard<std::mutex> lock(mu_);
    return gets_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> claims_;
  bool open_ = true;
  int gets_ = 0;
  long long next_ = 0;
};

class DraStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/kubelet";
    cdi_ = tmp_.path() + "/cdi";
    podres_ = std::make_unique<fake::FakePodResources>(kubelet::PodResourcesSocketPath(root_));
  }

  PreparerOptions Options() const {
    PreparerOptions o;
    o.driver = kDriver;
    o.pool = kPool;
    o.cdi_dir = cdi_;
    o.checkpoint_path = CheckpointPath(root_, kDriver);
    o.owner = root_;
    kubelet::PodResourcesOptions pr;
    pr.kubelet_root = root_;
    pr.timeout = std::chrono::seconds(5);
    o.kubelet_claims = [pr] { return kubelet::ListKubeletDraClaims(pr, kDriver); };
    return o;
  }

  Result<std::unique_ptr<Preparer>> Make() {
    return Preparer::Create(
        Options(), &claims_, [this](const std::string& pool, const std::string& device) {
          if (pool != kPool || !known_) return std::optional<PreparableDevice>();
          return std::optional<PreparableDevice>(
              PreparableDevice{device,
                               "rdma/hca_vf",
                               "0000:3b:00." + device.substr(device.size() - 1),
                               {"mlx5_" + device.substr(device.size() - 1)},
                               {"/dev/infiniband/uverbs" + device.substr(device.size() - 1)}});
        });
  }

  std::unique_ptr<Preparer> MakeOk() {
    auto p = Make();
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? std::move(*p) : nullptr;
  }

  // Prepares claim ns/name; "" or the error.
  static std::string PrepareError(Preparer& p, const std::string& ns, const std::string& uid,
                                  const std::string& name) {
    auto out = p.Prepare({{ns, uid, name}});
    if (!out.ok()) return out.status().ToString();
    return (*out)[uid].error;
  }

  // The pod "ns/pod" holding claim ns/name's devices, as the kubelet lists it.
  void Hold(const std::string& ns, const std::string& pod, const std::string& name,
            const std::string& uid, const std::vector<std::string>& devices) {
    std::vector<fake::FakeClaimDevice> held;
    for (const auto& d : devices) {
      held.push_back({ns, name, kDriver, kPool, d, {ClaimCdiDeviceId(kDriver, uid, d)}});
    }
    podres_->AddPod(ns, pod, "uid-" + pod, {fake::FakeContainer("main", {}, held)});
  }

  std::string Spec(const std::string& uid) const {
    return cdi_ + "/" + ClaimCdiSpecFileName(kDriver, uid);
  }
  std::string CheckpointFile() const { return CheckpointPath(root_, kDriver); }

  TempDir tmp_;
  std::string root_;
  std::string cdi_;
  GatedClaims claims_;
  std::unique_ptr<fake::FakePodResources> podres_;
  std::atomic<bool> known_{true};  // whether the lookup knows the node's devices yet
};

TEST_F(DraStateTest, ASecondInstanceWaitsForTheFirst) {
  auto first = MakeOk();
  ASSERT_NE(first, nullptr);
  auto second = Make();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr(CheckpointFile() + ".lock"));
  first.reset();
  // A write killed midway left its temporary file: the next instance removes it.
  const std::string debris = root_ + "/plugins/" + kDriver + "/.checkpoint.json.tmp.4242.0";
  WriteTextFile(debris, "{\"version\": 1, \"cla");
  EXPECT_TRUE(Make().ok());
  EXPECT_FALSE(Exists(debris));
}

// A checkpoint cut short or garbled, at several lengths: the Preparer starts, keeps the file
// aside, rebuilds the claims the kubelet reports held (not the others), keeps every spec (a
// held claim's restarted container needs its own), and a held claim keeps working.
TEST_F(DraStateTest, AnUnusableCheckpointIsKeptAsideAndRebuiltFromTheKubelet) {
  ASSERT_TRUE(podres_->Start().ok());
  const std::string held = claims_.Add("ml", "held", {"pci-0000-3b-00-2", "pci-0000-3b-00-3"});
  const std::string left = claims_.Add("ml", "left", {"pci-0000-3b-00-4"});
  Hold("ml", "trainer", "held", held, {"pci-0000-3b-00-2", "pci-0000-3b-00-3"});
  {
    auto p = MakeOk();
    ASSERT_EQ(PrepareError(*p, "ml", held, "held"), "");
    ASSERT_EQ(PrepareError(*p, "ml", left, "left"), "");
  }
  const std::string good = ReadTextFile(CheckpointFile());
  ASSERT_GT(good.size(), 100u);
  const std::string garbled = std::string(good).replace(good.size() / 2, 8, "\x01\x02{{[[\"\"");
  for (const std::string& bad :
       {good.substr(0, 0), good.substr(0, 1), good.substr(0, good.size() / 2),
        good.substr(0, good.size() - 2), garbled}) {
    SCOPED_TRACE("checkpoint of " + std::to_string(bad.size()) + " bytes");
    WriteTextFile(CheckpointFile(), bad);
    auto p = MakeOk();
    ASSERT_NE(p, nullptr);
    ASSERT_FALSE(p->kept_aside().empty());
    EXPECT_EQ(ReadTextFile(p->kept_aside()), bad);
    EXPECT_EQ(p->PreparedCount(), 1u);
    auto rebuilt = p->Prepared(held);
    ASSERT_TRUE(rebuilt.has_value());
    EXPECT_TRUE(rebuilt->recovered);
    EXPECT_EQ(rebuilt->namespace_name, "ml");
    EXPECT_EQ(rebuilt->name, "held");
    ASSERT_EQ(rebuilt->devices.size(), 2u);
    EXPECT_EQ(rebuilt->devices[1].pci_address, "0000:3b:00.3");
    EXPECT_EQ(rebuilt->cdi_spec_path, Spec(held));
    EXPECT_EQ(p->PciAddressOf(kPool, "pci-0000-3b-00-2"), "0000:3b:00.2");
    EXPECT_TRUE(Exists(Spec(held)));
    EXPECT_TRUE(Exists(Spec(left)));  // kept: the kubelet's list is no proof it is unused
    // What the CNI reads is the rebuilt checkpoint, on disk already.
    auto on_disk = Checkpoint::Load(CheckpointFile());
    ASSERT_TRUE(on_disk.ok()) << on_disk.status().ToString();
    EXPECT_EQ(on_disk->claims().size(), 1u);
    // A held claim asked again is prepared afresh (request names and all).
    const int gets = claims_.gets();
    ASSERT_EQ(PrepareError(*p, "ml", held, "held"), "");
    EXPECT_EQ(claims_.gets(), gets + 1);
    EXPECT_FALSE(p->Prepared(held)->recovered);
    EXPECT_EQ(p->Prepared(held)->devices[0].request_names, std::vector<std::string>{"nic"});
    // The other's Unprepare still removes its spec, though no entry is left.
    auto un = p->Unprepare({{"ml", left, "left"}});
    ASSERT_TRUE(un.ok());
    EXPECT_EQ((*un)[left], "");
    EXPECT_FALSE(Exists(Spec(left)));
    ASSERT_EQ(PrepareError(*p, "ml", left, "left"), "");  // for the next round
  }
  // Only the newest unusable files are kept.
  size_t aside = 0;
  for (const auto& e : std::filesystem::directory_iterator(root_ + "/plugins/" + kDriver)) {
    if (e.path().filename().string().find("checkpoint.json.unusable-") == 0) ++aside;
  }
  EXPECT_EQ(aside, kMaxKeptAsideCheckpoints);
}

// The driver's first view of the host comes after the Preparer is made: recovered devices
// get their PCI address (which hcashare-cni reads) once the lookup knows them.
TEST_F(DraStateTest, RecoveredDevicesAreCompletedOnceTheHostIsKnown) {
  ASSERT_TRUE(podres_->Start().ok());
  const std::string held = claims_.Add("ml", "held", {"pci-0000-3b-00-2"});
  Hold("ml", "trainer", "held", held, {"pci-0000-3b-00-2"});
  {
    auto p = MakeOk();
    ASSERT_EQ(PrepareError(*p, "ml", held, "held"), "");
  }
  WriteTextFile(CheckpointFile(), "garbage");
  known_ = false;
  auto p = MakeOk();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->PciAddressOf(kPool, "pci-0000-3b-00-2"), std::nullopt);
  p->CompleteRecovered();  // still unknown: nothing to fill in
  EXPECT_EQ(p->PciAddressOf(kPool, "pci-0000-3b-00-2"), std::nullopt);
  known_ = true;
  p->CompleteRecovered();
  EXPECT_EQ(p->PciAddressOf(kPool, "pci-0000-3b-00-2"), "0000:3b:00.2");
  auto on_disk = Checkpoint::Load(CheckpointFile());
  ASSERT_TRUE(on_disk.ok());
  EXPECT_EQ(on_disk->PciAddressOf(kPool, "pci-0000-3b-00-2"), "0000:3b:00.2");
  EXPECT_TRUE(on_disk->Find(held)->recovered);
}

// With the kubelet not answering, the Preparer still starts: empty, every spec kept.
TEST_F(DraStateTest, WithoutTheKubeletAnUnusableCheckpointStartsEmptyKeepingEverySpec) {
  const std::string uid = claims_.Add("ml", "c", {"pci-0000-3b-00-2"});
  {
    auto p = MakeOk();
    ASSERT_EQ(PrepareError(*p, "ml", uid, "c"), "");
  }
  WriteTextFile(CheckpointFile(), "{\"version\": 1, \"claims\": ");
  auto p = MakeOk();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->PreparedCount(), 0u);
  EXPECT_TRUE(Exists(Spec(uid)));
  ASSERT_TRUE(p->Unprepare({{"ml", uid, "c"}}).ok());
  EXPECT_FALSE(Exists(Spec(uid)));
}

// Issue 33: a Prepare still reading the API server when the kubelet's Unprepare of the same
// claim came wrote the entry and spec back afterwards, for good.
TEST_F(DraStateTest, APrepareOvertakenByItsUnprepareIsNotWrittenBack) {
  auto p = MakeOk();
  ASSERT_NE(p, nullptr);
  const std::string uid = claims_.Add("ml", "slow", {"pci-0000-3b-00-2"});
  claims_.SetOpen(false);
  std::string error;
  std::thread prepare([&] { error = PrepareError(*p, "ml", uid, "slow"); });
  claims_.WaitGets(1);
  auto un = p->Unprepare({{"ml", uid, "slow"}});
  ASSERT_TRUE(un.ok());
  EXPECT_EQ((*un)[uid], "");
  claims_.SetOpen(true);
  prepare.join();
  EXPECT_THAT(error, HasSubstr("unprepared while it was being prepared"));
  EXPECT_FALSE(p->Prepared(uid).has_value());
  EXPECT_FALSE(Exists(Spec(uid)));
  auto on_disk = Checkpoint::Load(CheckpointFile());
  ASSERT_TRUE(on_disk.ok());
  EXPECT_EQ(on_disk->Find(uid), nullptr);
  // A Prepare that starts after the Unprepare is a new one.
  EXPECT_EQ(PrepareError(*p, "ml", uid, "slow"), "");
  EXPECT_TRUE(Exists(Spec(uid)));
}

// 10,000 claims prepared and abandoned (their Unprepare missed, their claims deleted): the
// checkpoint holds them, the Preparer starts, held claims keep working, and collection
// shrinks it back to what pods hold, also leaving a claim that still exists.
TEST_F(DraStateTest, AbandonedClaimsAreCollectedAndHeldOnesKept) {
  ASSERT_TRUE(podres_->Start().ok());
  const std::string held = claims_.Add("ml", "held", {"pci-0000-3b-00-2"});
  const std::string exists = claims_.Add("ml", "pending", {"pci-0000-3b-00-3"});
  Hold("ml", "trainer", "held", held, {"pci-0000-3b-00-2"});
  {
    auto p = MakeOk();
    ASSERT_EQ(PrepareError(*p, "ml", held, "held"), "");
    ASSERT_EQ(PrepareError(*p, "ml", exists, "pending"), "");
  }
  auto cp = Checkpoint::Load(CheckpointFile());
  ASSERT_TRUE(cp.ok());
  std::map<std::string, PreparedClaim> all = cp->claims();
  for (int i = 0; i < 10000; ++i) {
    PreparedClaim c = all.at(held);
    c.uid = "abandoned-" + std::to_string(i);
    c.name = "gone-" + std::to_string(i);
    c.cdi_spec_path = "";
    c.devices[0].cdi_device_ids = {ClaimCdiDeviceId(kDriver, c.uid, c.devices[0].device)};
    all[c.uid] = c;
  }
  WriteTextFile(CheckpointFile(), Checkpoint::Serialize(all));
  const auto big = std::filesystem::file_size(CheckpointFile());

  auto p = MakeOk();
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->kept_aside().empty());
  EXPECT_EQ(p->PreparedCount(), 10002u);
  // Held claims keep working meanwhile: answered from the checkpoint.
  const int gets = claims_.gets();
  ASSERT_EQ(PrepareError(*p, "ml", held, "held"), "");
  EXPECT_EQ(claims_.gets(), gets);

  // A young entry is left; rounds of 4,000 checks each, least recently checked first.
  CollectReport young = p->Collect(&claims_, 20000, std::chrono::hours(1));
  EXPECT_EQ(young.checked, 0u);
  CollectReport r1 = p->Collect(&claims_, 4000, std::chrono::seconds(0));
  EXPECT_EQ(r1.checked, 4000u);
  CollectReport r2 = p->Collect(&claims_, 4000, std::chrono::seconds(0));
  CollectReport r3 = p->Collect(&claims_, 4000, std::chrono::seconds(0));
  EXPECT_EQ(r1.collected + r2.collected + r3.collected, 10000u);
  // Least recently checked first: the claim that still exists (checked in the first
  // round) comes again only after every other entry had its turn.
  EXPECT_EQ(r1.checked + r2.checked + r3.checked, 10002u);
  EXPECT_EQ(r3.remaining, 2u);
  EXPECT_TRUE(p->Prepared(held).has_value());
  EXPECT_TRUE(p->Prepared(exists).has_value());
  EXPECT_TRUE(Exists(Spec(held)));
  EXPECT_TRUE(Exists(Spec(exists)));
  EXPECT_LT(std::filesystem::file_size(CheckpointFile()) * 1000, big);

  // A claim deleted and created again under its name (another UID) is collected too.
  claims_.Remove("ml", "pending");
  claims_.Add("ml", "pending", {"pci-0000-3b-00-3"});
  EXPECT_EQ(p->Collect(&claims_, 10, std::chrono::seconds(0)).collected, 1u);
  EXPECT_FALSE(Exists(Spec(exists)));
  // The kubelet not answering: nothing is collected.
  podres_->Stop();
  claims_.Remove("ml", "held");
  EXPECT_EQ(p->Collect(&claims_, 10, std::chrono::seconds(0)).collected, 0u);
  EXPECT_TRUE(p->Prepared(held).has_value());
}

}  // namespace
}  // namespace hcashare::dra
