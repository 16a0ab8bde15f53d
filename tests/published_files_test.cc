// Files the device plugin publishes (issue 25): the ledger's owner is the canonical kubelet
// root, CDI names are unique per kubelet root, a file we did not write is never
// overwritten or removed, and a stopping daemon hands its files to its successor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "common/owned_files.h"
#include "common/temp_dir.h"
#include "daemon/pool_info_writer.h"
#include "daemon/published_files.h"
#include "deviceplugin/cdi.h"
#include "metrics/registry.h"
#include "tests/metrics_test_util.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::ReadTextFile;

// A shared resource "rdma/<name>" and a usable pool of one HCA.
config::ResourceConfig Resource(const std::string& name) {
  config::ResourceConfig rc;
  rc.resource_name = name;
  rc.resource_prefix = "rdma";
  rc.rdma_hca_max = 2;
  return rc;
}

node::PoolState Pool() {
  node::PciFunction fn;
  fn.address = "0000:3b:00.0";
  fn.netdevs = {"ib0"};
  fn.rdma = {node::RdmaDeviceInfo{"mlx5_0", {"/dev/infiniband/uverbs0"}, {"infiniband"}, {"1"}}};
  node::PoolState pool;
  pool.hcas = {fn};
  return pool;
}

class PublishedFilesTest : public ::testing::Test {
 protected:
  bool Exists(const std::string& name) const { return fs::exists(dir_ + "/" + name); }
  // Puts a file of someone else's at `name`.
  void Foreign(const std::string& name, const std::string& content = "theirs") const {
    fs::create_directories(dir_);
    std::ofstream(dir_ + "/" + name) << content;
  }
  std::string Read(const std::string& name) const { return ReadTextFile(dir_ + "/" + name); }

  TempDir tmp_;
  const std::string dir_ = tmp_.path() + "/d";
  const std::string root_ = tmp_.path() + "/kubelet";
};

TEST(CanonicalPathTest, OneSpellingPerDirectory) {
  TempDir tmp;
  fs::create_directories(tmp.path() + "/real");
  fs::create_directory_symlink(tmp.path() + "/real", tmp.path() + "/link");
  const std::string real = CanonicalPath(tmp.path() + "/real");
  EXPECT_EQ(CanonicalPath(tmp.path() + "/real/"), real);
  EXPECT_EQ(CanonicalPath(tmp.path() + "/link"), real);
  EXPECT_EQ(CanonicalPath(tmp.path() + "/link//"), real);
  // Not there: lexically.
  EXPECT_EQ(CanonicalPath("/nonexistent//a/./b/../c/"), "/nonexistent/a/c");
  EXPECT_EQ(CanonicalPath("/"), "/");
}

// Item 3: a file we did not write is neither overwritten nor removed, whatever we do.
TEST_F(PublishedFilesTest, ForeignFileIsNeverOverwrittenOrRemoved) {
  Foreign("f.json");
  fs::create_directories(tmp_.path() + "/elsewhere");
  std::ofstream(tmp_.path() + "/elsewhere/target") << "target";
  fs::create_symlink(tmp_.path() + "/elsewhere/target", dir_ + "/l.json");
  {
    OwnedFiles files(dir_, root_);
    bool changed = true;
    const Status st = files.Write("f.json", "ours", &changed);
    EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
    EXPECT_NE(st.message().find(dir_ + "/f.json"), std::string::npos) << st.message();
    EXPECT_FALSE(changed);
    EXPECT_EQ(files.Write("l.json", "ours").code(), StatusCode::kAlreadyExists);
    EXPECT_THAT(files.foreign(), ElementsAre("f.json", "l.json"));
    files.Remove("f.json");
    files.RemoveAll();
    EXPECT_EQ(files.Write("f.json", "ours").code(), StatusCode::kAlreadyExists);
    files.HandOver({});
  }
  OwnedFiles next(dir_, root_);
  EXPECT_THAT(next.Reclaim({}), IsEmpty());
  auto removed = next.RemoveEverything();
  ASSERT_TRUE(removed.ok());
  EXPECT_THAT(*removed, IsEmpty());
  EXPECT_EQ(Read("f.json"), "theirs");
  EXPECT_TRUE(fs::is_symlink(dir_ + "/l.json"));
  EXPECT_EQ(ReadTextFile(tmp_.path() + "/elsewhere/target"), "target");
  // Identical content is adopted (as today): ours from then on.
  Foreign("same.json", "ours");
  EXPECT_TRUE(next.Write("same.json", "ours").ok());
  EXPECT_TRUE(next.Write("same.json", "ours v2").ok());
  EXPECT_EQ(Read("same.json"), "ours v2");
}

// Item 3: "ours" also covers a file another instance of our owner lists, live (a rollout
// overlap) or dead (reclaimed); another owner's file is foreign to us.
TEST_F(PublishedFilesTest, FilesOurOwnersLedgersListAreOurs) {
  OwnedFiles live(dir_, root_);
  ASSERT_TRUE(live.Write("a.json", "old").ok());
  OwnedFiles next(dir_, root_);
  EXPECT_TRUE(next.Write("a.json", "new").ok()) << "listed in a live ledger of ours";
  EXPECT_EQ(Read("a.json"), "new");
  {
    OwnedFiles dead(dir_, root_);
    ASSERT_TRUE(dead.Write("b.json", "old").ok());
  }
  OwnedFiles third(dir_, root_);
  third.Reclaim({"b.json"});
  EXPECT_TRUE(third.Write("b.json", "new").ok()) << "reclaimed from a dead ledger";
  {
    OwnedFiles other(dir_, root_ + "2");
    ASSERT_TRUE(other.Write("c.json", "theirs").ok());
  }
  EXPECT_EQ(third.Write("c.json", "ours").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Read("c.json"), "theirs");
}

// Item 4: a stopping instance leaves the files of configured resources, listed, for its
// successor, which owns them again; only what no resource has is removed.
TEST_F(PublishedFilesTest, HandOverLeavesFilesForTheSuccessor) {
  {
    OwnedFiles old_one(dir_, root_);
    ASSERT_TRUE(old_one.Write("kept.json", "k").ok());
    ASSERT_TRUE(old_one.Write("dropped.json", "d").ok());
    old_one.HandOver({"kept.json"});
    EXPECT_TRUE(Exists("kept.json"));
    EXPECT_FALSE(Exists("dropped.json"));
  }
  EXPECT_TRUE(Exists("kept.json")) << "the object's end changes nothing";
  OwnedFiles next(dir_, root_);
  EXPECT_THAT(next.Reclaim({"kept.json"}), IsEmpty());
  ASSERT_TRUE(next.Write("kept.json", "k2").ok());
  next.RemoveAll();
  EXPECT_FALSE(Exists("kept.json")) << "ours again";
}

// Item 4: uninstall removes every file of this owner and the ledgers, and nothing foreign;
// while an instance lives it removes nothing.
TEST_F(PublishedFilesTest, RemoveEverythingTakesAllOfOursAndNothingElse) {
  {
    OwnedFiles old_one(dir_, root_);
    ASSERT_TRUE(old_one.Write("a.json", "a").ok());
    old_one.HandOver({"a.json"});
  }
  {
    OwnedFiles other(dir_, root_ + "2");
    ASSERT_TRUE(other.Write("x.json", "x").ok());
    other.HandOver({"x.json"});
  }
  Foreign("vendor.json");
  {
    OwnedFiles live(dir_, root_);
    ASSERT_TRUE(live.Write("b.json", "b").ok());
    OwnedFiles uninstall(dir_, root_);
    auto refused = uninstall.RemoveEverything();
    EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_TRUE(Exists("a.json") && Exists("b.json"));
    live.HandOver({"b.json"});
  }
  OwnedFiles uninstall(dir_, root_);
  auto removed = uninstall.RemoveEverything();
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_THAT(*removed, ::testing::UnorderedElementsAre("a.json", "b.json"));
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_)) left.insert(e.path().filename().string());
  ASSERT_EQ(left.size(), 3u) << "x.json, its ledger and vendor.json";
  EXPECT_TRUE(left.count("x.json") && left.count("vendor.json"));
}

// Item 1: a restart that spells the kubelet root differently (a trailing '/', a symlink)
// is the same owner and cleans up what the earlier run left.
TEST_F(PublishedFilesTest, OwnerIsTheCanonicalKubeletRoot) {
  fs::create_directories(root_);
  fs::create_directory_symlink(root_, tmp_.path() + "/link");
  const std::vector<config::ResourceConfig> none;
  for (const std::string& again : {root_ + "/", tmp_.path() + "/link", tmp_.path() + "/link/"}) {
    {
      daemon::PoolInfoWriter dead(dir_, root_);
      ASSERT_TRUE(dead.Write(Resource("gone"), Pool()).ok());
    }  // as after SIGKILL
    ASSERT_TRUE(Exists("rdma_gone.json"));
    daemon::PoolInfoWriter next(dir_, again);
    next.Reclaim(none);
    EXPECT_FALSE(Exists("rdma_gone.json")) << "restarted as " << again;
  }
  {
    dp::CdiSpecWriter dead(dir_, root_ + "/");
    ASSERT_TRUE(dead.Write(Resource("gone"), Pool()).ok());
  }
  dp::CdiSpecWriter next(dir_, tmp_.path() + "/link");
  const std::string spec = dp::CdiSpecFileName(Resource("gone"), next.tag());
  ASSERT_TRUE(Exists(spec));
  next.Reclaim(none);
  EXPECT_FALSE(Exists(spec));
}

// Item 2: the default root keeps its names; any other root has a tag of its canonical path.
TEST(CdiInstanceTagTest, UniquePerKubeletRootAndStable) {
  EXPECT_EQ(dp::CdiInstanceTag("/var/lib/kubelet"), "");
  EXPECT_EQ(dp::CdiInstanceTag("/var/lib/kubelet/"), "");
  const std::string a = dp::CdiInstanceTag("/nonexistent/kubelet2");
  EXPECT_THAT(a, ::testing::MatchesRegex("k[0-9a-f]{8}"));
  EXPECT_EQ(dp::CdiInstanceTag("/nonexistent//kubelet2/"), a);
  EXPECT_NE(dp::CdiInstanceTag("/nonexistent/kubelet3"), a);
  EXPECT_EQ(dp::CdiSpecFileName(Resource("a")), "hcashare-rdma_a.json");
  EXPECT_EQ(dp::CdiSpecFileName(Resource("a"), "k0000abcd"), "hcashare-rdma_a.k0000abcd.json");
}

// Item 2: two daemons of different kubelet roots serving the same resource into one CDI
// directory: two files, no device defined twice, and one's exit leaves the other's.
TEST_F(PublishedFilesTest, TwoKubeletRootsNeverShareACdiSpecOrDevice) {
  const config::ResourceConfig rc = Resource("a");
  dp::CdiSpecWriter one(dir_, root_ + "1");
  dp::CdiSpecWriter two(dir_, root_ + "2");
  ASSERT_TRUE(one.Write(rc, Pool()).ok());
  ASSERT_TRUE(two.Write(rc, Pool()).ok());
  const std::string spec_one = dp::CdiSpecFileName(rc, one.tag());
  const std::string spec_two = dp::CdiSpecFileName(rc, two.tag());
  ASSERT_NE(spec_one, spec_two);
  std::set<std::string> devices;
  for (const auto& [spec, tag] : {std::pair{spec_one, one.tag()}, std::pair{spec_two, two.tag()}}) {
    auto json = nlohmann::json::parse(Read(spec), nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << spec;
    ASSERT_EQ(json["devices"].size(), 1u);
    const std::string name =
        json["kind"].get<std::string>() + "=" + json["devices"][0]["name"].get<std::string>();
    EXPECT_TRUE(devices.insert(name).second) << name << " is defined twice";
    // What Allocate answers names what the spec defines.
    EXPECT_THAT(dp::CdiDeviceNames(rc, Pool(), {"0"}, tag), ElementsAre(name));
  }
  one.files().RemoveAll();
  EXPECT_FALSE(Exists(spec_one));
  EXPECT_TRUE(Exists(spec_two)) << "one daemon's exit removed the other's spec";
}

// Item 3, one level up: the refusal marks the resource's CDI unavailable and is counted.
TEST_F(PublishedFilesTest, ForeignSpecMakesCdiUnavailableAndIsCounted) {
  metrics::Registry registry;
  dp::DpMetrics metrics(registry);
  const config::ResourceConfig rc = Resource("a");
  daemon::PublishedFiles files({root_, dir_, true, ""}, &metrics);
  const std::string spec = dp::CdiSpecFileName(rc, dp::CdiInstanceTag(root_));
  const std::string series = "hcashare_foreign_files{dir=\"" + dir_ + "\"}";
  EXPECT_EQ(testing::SampleValue(registry.Render(), series), 0);
  Foreign(spec);
  node::PoolState pool = Pool();
  files.Write(rc, &pool);
  EXPECT_NE(pool.cdi_unavailable.find(dir_ + "/" + spec), std::string::npos)
      << pool.cdi_unavailable;
  EXPECT_EQ(testing::SampleValue(registry.Render(), series), 1);
  EXPECT_EQ(Read(spec), "theirs");
  // Gone: ours is written at the next publish.
  fs::remove(dir_ + "/" + spec);
  pool = Pool();
  files.Write(rc, &pool);
  EXPECT_EQ(pool.cdi_unavailable, "");
  EXPECT_EQ(testing::SampleValue(registry.Render(), series), 0);
  EXPECT_TRUE(Exists(spec));
}

// Specs handed over by a daemon with --use-cdi are removed by the next start without it:
// nothing would ever rewrite or remove them otherwise.
TEST_F(PublishedFilesTest, StartWithCdiOffRemovesTheSpecsEarlierRunsLeft) {
  const std::vector<config::ResourceConfig> resources = {Resource("a")};
  const std::string spec = dp::CdiSpecFileName(resources[0], dp::CdiInstanceTag(root_));
  {
    daemon::PublishedFiles with_cdi({root_, dir_, true, ""}, nullptr);
    node::PoolState pool = Pool();
    with_cdi.Write(resources[0], &pool);
    with_cdi.HandOver(resources);
  }
  ASSERT_TRUE(Exists(spec));
  Foreign("vendor.json");
  daemon::PublishedFiles without({root_, dir_, false, ""}, nullptr);
  without.Reclaim(resources);
  EXPECT_FALSE(Exists(spec));
  EXPECT_TRUE(Exists("vendor.json"));
}

}  // namespace
}  // namespace hcashare
