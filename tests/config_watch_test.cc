// The device plugin's config file is watched (issue 25): a ConfigMap's "..data" symlink
// swap and a symlink into another directory whose target changes are applied without a
// restart; an invalid update is rejected and the running config kept.
#include <filesystem>
#include <fstream>

#include "tests/server_fixture.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace hcashare::dp {
namespace {

class ConfigWatchTest : public ServerTest {
 protected:
  // The kubelet, and a manager started from the config file at `path`, which it watches;
  // nullptr (with a test failure) when either does not start.
  daemon::ControlLoop* StartOnFile(const std::string& path) {
    if (!kubelet_->Start().ok()) return nullptr;
    daemon::ControlLoopOptions opts = Options();
    opts.config_path = path;
    auto cfg = config::LoadConfigFile(path);
    EXPECT_TRUE(cfg.ok());
    if (!cfg.ok()) return nullptr;
    managers_.push_back(std::make_unique<daemon::ControlLoop>(opts, *host_, rdma_, &uevents_));
    if (!managers_.back()->Start(*cfg.config).ok()) return nullptr;
    return managers_.back().get();
  }
};

// The config file is watched: a ConfigMap-style "..data" symlink swap is applied without a
// restart; an invalid update is rejected and the running config kept.
TEST_F(ConfigWatchTest, ConfigReloadThroughSymlinkSwap) {
  const std::string dir = tmp_.path() + "/configmap";
  auto write_version = [&](const std::string& name, const std::string& body) {
    fs::create_directories(dir + "/" + name);
    std::ofstream(dir + "/" + name + "/config.json") << body;
    fs::create_symlink(name, dir + "/..data_tmp");
    fs::rename(dir + "/..data_tmp", dir + "/..data");  // atomic, as the kubelet does
  };
  write_version("..v1", R"({"configList": [
    {"resourceName": "hca_a", "rdmaHcaMax": 2, "selectors": {"ifNames": ["ib0"]}}]})");
  fs::create_symlink("..data/config.json", dir + "/config.json");
  daemon::ControlLoop* m = StartOnFile(dir + "/config.json");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(WaitListed(kResA, 2));

  write_version("..v2", R"({"configList": [
    {"resourceName": "hca_a", "rdmaHcaMax": 5, "selectors": {"ifNames": ["ib0"]}},
    {"resourceName": "hca_b", "rdmaHcaMax": 1, "selectors": {"ifNames": ["ib1"]}}]})");
  ASSERT_TRUE(WaitListed(kResA, 5));
  ASSERT_TRUE(WaitListed(kResB, 1));
  // Counted once the reload has returned, which is after hca_b may already be listed.
  EXPECT_TRUE(testing::WaitUntil([&] { return m->reloads_ok() >= 1; }));
  EXPECT_EQ(m->reloads_ok(), 1u);

  write_version("..v3", R"({"configList": [{"resourceName": "hca_a"}]})");
  EXPECT_TRUE(testing::WaitUntil([&] { return m->reloads_failed() > 0; }));
  EXPECT_EQ(m->reloads_failed(), 1u);
  EXPECT_TRUE(Listed(kubelet_->View(kResA), 5));
  EXPECT_TRUE(kubelet_->View(kResB).connected);
}

// A config that is a symlink into another directory (an administrator's link to a file kept
// elsewhere): writing the target is applied, and so is re-pointing the link at another
// file. Only the link's directory was watched before (issue 25).
TEST_F(ConfigWatchTest, ConfigReloadThroughASymlinkIntoAnotherDirectory) {
  const std::string etc = tmp_.path() + "/etc", srv = tmp_.path() + "/srv";
  fs::create_directories(etc);
  fs::create_directories(srv);
  auto write = [](const std::string& path, int max) {
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << R"({"configList": [{"resourceName": "hca_a", "rdmaHcaMax": )" +
                              std::to_string(max) + R"(, "selectors": {"ifNames": ["ib0"]}}]})";
    fs::rename(tmp, path);  // as an editor saves
  };
  write(srv + "/rdma.json", 2);
  fs::create_symlink(srv + "/rdma.json", etc + "/config.json");
  daemon::ControlLoop* m = StartOnFile(etc + "/config.json");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(WaitListed(kResA, 2));

  write(srv + "/rdma.json", 3);  // the target, in its own directory
  ASSERT_TRUE(WaitListed(kResA, 3));
  EXPECT_TRUE(testing::WaitUntil([&] { return m->reloads_ok() >= 1; }));

  // The link re-pointed at a file in a third directory; then that file changes.
  const std::string other = tmp_.path() + "/other";
  fs::create_directories(other);
  write(other + "/rdma.json", 4);
  fs::create_symlink(other + "/rdma.json", etc + "/config.json.new");
  fs::rename(etc + "/config.json.new", etc + "/config.json");
  ASSERT_TRUE(WaitListed(kResA, 4));
  write(other + "/rdma.json", 5);
  ASSERT_TRUE(WaitListed(kResA, 5));
}

}  // namespace
}  // namespace hcashare::dp
