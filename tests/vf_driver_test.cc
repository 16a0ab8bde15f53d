// cni/vf_driver.h on a fixture tree in the real sysfs layout: the driver is the one the
// kernel's `driver` link names, unbind and bind write the VF's address to that driver's
// files, and every write is confined below <root>/sys/bus/pci: a tree that redirects
// `drivers`, a driver's directory or its `bind` elsewhere with a symlink gets no write
// (issue 24: a NAD's hostRoot made ADD unbind another driver's device), by openat2 and by
// the walk that runs where the kernel has none (common/safe_file.h).
#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cni/vf_driver.h"
#include "common/host.h"
#include "common/safe_file.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"

namespace hcashare::cni {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class VfDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake::SimPciFunction pf;
    pf.address = "0000:7e:00.0";
    pf.netdevs = {"ib0"};
    ASSERT_TRUE(node_.AddPciFunction(pf).ok());
    fake::SimPciFunction vf;
    vf.address = kVf;
    vf.physfn = pf.address;
    vf.netdevs = {"ib0v0"};
    ASSERT_TRUE(node_.AddPciFunction(vf).ok());
    fake::SimPciFunction unbound;
    unbound.address = "0000:7e:00.2";
    unbound.physfn = pf.address;
    unbound.driver = "";
    ASSERT_TRUE(node_.AddPciFunction(unbound).ok());
    // The driver's attributes, as regular files the test can read back.
    for (const char* f : {"unbind", "bind"}) std::ofstream(Driver() + "/" + f);
  }
  std::string Root() const { return tmp_.path() + "/host"; }
  std::string Driver() const { return Root() + "/sys/bus/pci/drivers/mlx5_core"; }

  static constexpr const char* kVf = "0000:7e:00.1";
  TempDir tmp_;
  fake::SimNode node_{tmp_.path() + "/host"};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path() + "/host");
  std::unique_ptr<VfDriver> driver_ = NewSysfsVfDriver(*host_);
};

TEST_F(VfDriverTest, TheDriverIsTheOneTheKernelsLinkNames) {
  auto bound = driver_->BoundDriver(kVf);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ(*bound, "mlx5_core");
  auto none = driver_->BoundDriver("0000:7e:00.2");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, "");
}

TEST_F(VfDriverTest, UnbindAndBindWriteTheAddressToThatDriversFiles) {
  ASSERT_TRUE(driver_->Unbind(kVf, "mlx5_core").ok());
  EXPECT_EQ(Read(Driver() + "/unbind"), kVf);
  EXPECT_EQ(Read(Driver() + "/bind"), "");
  ASSERT_TRUE(driver_->Bind(kVf, "mlx5_core").ok());
  EXPECT_EQ(Read(Driver() + "/bind"), kVf);
}

TEST_F(VfDriverTest, ADriverNameThatLeavesTheDriversDirectoryIsRefused) {
  for (const char* bad : {"..", ".", "", "../../devices/x", "mlx5_core/../other"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(driver_->Unbind(kVf, bad).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(driver_->Bind(kVf, bad).code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(driver_->Bind("0000:7e:00.1\n0000:00:1f.2", "mlx5_core").code(),
            StatusCode::kInvalidArgument);
  // The `driver` link itself naming "..": refused, not followed.
  const std::string link = Root() + "/sys/bus/pci/devices/0000:7e:00.2/driver";
  fs::create_symlink("..", link);
  EXPECT_EQ(driver_->BoundDriver("0000:7e:00.2").status().code(), StatusCode::kInvalidArgument);
}

// The adversary: whoever wrote the tree under hostRoot (a NAD author, before node settings
// came from the node file). A symlink on any component below sys/bus/pci would send the
// write to another driver's unbind: on a real node, an NVMe disk or the uplink.
TEST_F(VfDriverTest, ASymlinkOnAnyComponentBelowSysBusPciGetsNoWrite) {
  // The victim: another driver whose unbind must stay untouched.
  const std::string victim = tmp_.path() + "/victim";
  fs::create_directories(victim + "/drivers/mlx5_core");
  fs::create_directories(victim + "/nvme");
  for (const char* f : {"unbind", "bind"}) {
    std::ofstream(victim + "/drivers/mlx5_core/" + f);
    std::ofstream(victim + "/nvme/" + f);
  }
  const std::string drivers = Root() + "/sys/bus/pci/drivers";
  struct Case {
    const char* what;
    std::function<void()> plant;
  };
  const std::vector<Case> cases = {
      {"drivers/ a symlink",
       [&] {
         fs::remove_all(drivers);
         fs::create_directory_symlink(victim + "/drivers", drivers);
       }},
      {"drivers/mlx5_core a symlink",
       [&] {
         fs::remove_all(drivers);
         fs::create_directories(drivers);
         fs::create_directory_symlink(victim + "/nvme", drivers + "/mlx5_core");
       }},
      {"drivers/mlx5_core/unbind a symlink",
       [&] {
         fs::remove_all(drivers);
         fs::create_directories(drivers + "/mlx5_core");
         fs::create_symlink(victim + "/nvme/unbind", drivers + "/mlx5_core/unbind");
         fs::create_symlink(victim + "/nvme/bind", drivers + "/mlx5_core/bind");
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    c.plant();
    const Status unbind = driver_->Unbind(kVf, "mlx5_core");
    EXPECT_EQ(unbind.code(), StatusCode::kPermissionDenied) << unbind.ToString();
    EXPECT_NE(unbind.message().find("symlink"), std::string::npos) << unbind.ToString();
    EXPECT_EQ(driver_->Bind(kVf, "mlx5_core").code(), StatusCode::kPermissionDenied);
    // The same refusal where the kernel has no openat2.
    for (const char* attr : {"unbind", "bind"}) {
      auto walked = OpenBeneathByWalk(Root(), std::string("sys/bus/pci/drivers/mlx5_core/") + attr,
                                      O_WRONLY | O_CLOEXEC);
      EXPECT_EQ(walked.status().code(), StatusCode::kPermissionDenied) << attr;
    }
    for (const char* f :
         {"drivers/mlx5_core/unbind", "drivers/mlx5_core/bind", "nvme/unbind", "nvme/bind"}) {
      EXPECT_EQ(Read(victim + "/" + f), "") << f;
    }
  }
}

}  // namespace
}  // namespace hcashare::cni
