// hostfacts/live.h on SimNode trees: presence of functions, auxiliary and virtual RDMA
// devices and char devices, port states and operstates that change between snapshots, a
// function's netdevs and bound driver, and the driver control files opened only below the
// host root.
#include "hostfacts/live.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/host.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"

namespace hcashare::hostfacts {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPf = "0000:3b:00.0";
constexpr const char* kVf = "0000:3b:00.2";
constexpr const char* kSf = "mlx5_core.sf.4";

class LiveFactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(sim_.AddPciFunction(fake::SimNode::IbHca(kPf, "ib0", "mlx5_0")).ok());
    ASSERT_TRUE(sim_.AddPciFunction(fake::SimNode::RoceVf(kVf, kPf, "eth2", "mlx5_2")).ok());
    fake::SimSubFunction sf;
    sf.name = kSf;
    sf.parent = kPf;
    sf.netdevs = {"enp59s0f0s4"};
    sf.rdma_device = "mlx5_4";
    ASSERT_TRUE(sim_.AddSubFunction(sf).ok());
    fake::SimVirtualRdma rxe;
    rxe.name = "rxe0";
    rxe.netdev = "veth0";
    ASSERT_TRUE(sim_.AddVirtualRdma(rxe).ok());
  }
  std::string Root() const { return tmp_.path() + "/host"; }

  TempDir tmp_;
  fake::SimNode sim_{tmp_.path() + "/host"};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path() + "/host");
  LiveFacts live_{*host_};
};

TEST(LiveFactsPaths, EachBusHasItsDirectory) {
  EXPECT_EQ(DeviceDir({kPf, DeviceBus::kPci}), "/sys/bus/pci/devices/0000:3b:00.0");
  EXPECT_EQ(DeviceDir(PciOrAux(kSf, true)), "/sys/bus/auxiliary/devices/mlx5_core.sf.4");
  EXPECT_EQ(DeviceDir({"rxe0", DeviceBus::kVirtualRdma}), "/sys/class/infiniband/rxe0");
  EXPECT_EQ(BusDir(DeviceBus::kPci), "/sys/bus/pci/devices");
  EXPECT_EQ(DriverControlPath("mlx5_core", "bind"), "/sys/bus/pci/drivers/mlx5_core/bind");
  EXPECT_EQ(PathBelowSysDevices("/sys/devices/pci0000:3a/0000:3a:00.0"), "pci0000:3a/0000:3a:00.0");
  EXPECT_EQ(PathBelowSysDevices("/sys/bus/pci/devices/0000:3a:00.0"), "");
}

TEST_F(LiveFactsTest, DevicesArePresentUntilRemoved) {
  EXPECT_TRUE(live_.DevicePresent({kPf}));
  EXPECT_TRUE(live_.DevicePresent(PciOrAux(kSf, true)));
  EXPECT_TRUE(live_.DevicePresent({"rxe0", DeviceBus::kVirtualRdma}));
  EXPECT_FALSE(live_.DevicePresent(PciOrAux(kSf, false)));  // not a PCI function
  ASSERT_TRUE(sim_.RemovePciFunction(kVf).ok());
  EXPECT_FALSE(live_.DevicePresent({kVf}));
  ASSERT_TRUE(sim_.RemovePciFunction("rxe0").ok());
  EXPECT_FALSE(live_.DevicePresent({"rxe0", DeviceBus::kVirtualRdma}));
}

TEST_F(LiveFactsTest, CharDevicesAndRdmaCm) {
  EXPECT_TRUE(live_.CharDevicePresent("/dev/infiniband/rdma_cm"));
  EXPECT_TRUE(live_.CharDevicePresent("/dev/infiniband/uverbs0"));
  EXPECT_FALSE(live_.CharDevicePresent("/dev/infiniband/uverbs9"));
  ASSERT_TRUE(sim_.SetRdmaCm(false).ok());
  EXPECT_FALSE(live_.CharDevicePresent("/dev/infiniband/rdma_cm"));
}

TEST_F(LiveFactsTest, PortStatesAreReadAgainEachTime) {
  EXPECT_EQ(live_.PortState({kPf}, "mlx5_0", "1"), "4: ACTIVE");
  ASSERT_TRUE(sim_.SetPortState(kPf, 1, "1: DOWN").ok());
  EXPECT_EQ(live_.PortState({kPf}, "mlx5_0", "1"), "1: DOWN");
  EXPECT_EQ(live_.PortState(PciOrAux(kSf, true), "mlx5_4", "1"), "4: ACTIVE");
  EXPECT_EQ(live_.PortState({"rxe0", DeviceBus::kVirtualRdma}, "rxe0", "1"), "4: ACTIVE");
  EXPECT_EQ(live_.PortState({kPf}, "mlx5_0", "2"), "");  // no such port: unknown
  EXPECT_EQ(live_.PortState({kPf}, "mlx5_9", "1"), "");
}

TEST_F(LiveFactsTest, OperStatesOfAFunctionsAndAVirtualDevicesNetdevs) {
  EXPECT_EQ(live_.OperState({kPf}, "ib0"), "up");
  ASSERT_TRUE(sim_.SetOperState(kPf, "ib0", "down").ok());
  EXPECT_EQ(live_.OperState({kPf}, "ib0"), "down");
  EXPECT_EQ(live_.OperState(PciOrAux(kSf, true), "enp59s0f0s4"), "up");
  EXPECT_EQ(live_.OperState({"rxe0", DeviceBus::kVirtualRdma}, "veth0"), "up");
  EXPECT_EQ(live_.OperState({kPf}, "eth2"), "");  // the VF's, not the PF's
}

TEST_F(LiveFactsTest, NetdevsOfAFunctionOrAnAuxiliaryDevice) {
  EXPECT_EQ(live_.Netdevs({kVf}), std::vector<std::string>{"eth2"});
  EXPECT_EQ(live_.Netdevs(PciOrAux(kSf, true)), std::vector<std::string>{"enp59s0f0s4"});
  ASSERT_TRUE(sim_.MoveRdmaToPod(kVf).ok());
  EXPECT_TRUE(live_.Netdevs({kVf}).empty());
}

TEST_F(LiveFactsTest, TheBoundDriverIsTheOneTheLinkNames) {
  auto bound = live_.BoundDriver(kVf);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ(*bound, "mlx5_core");
  auto gone = live_.BoundDriver("0000:99:00.0");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(*gone, "");
  EXPECT_EQ(live_.BoundDriver("../x").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LiveFactsTest, DriverControlFilesOpenOnlyBelowTheRoot) {
  const std::string drivers = Root() + "/sys/bus/pci/drivers";
  fs::create_directories(drivers + "/mlx5_core");
  std::ofstream(drivers + "/mlx5_core/bind");
  EXPECT_TRUE(live_.OpenDriverControl("mlx5_core", "bind").ok());
  EXPECT_EQ(live_.OpenDriverControl("mlx5_core", "new_id").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(live_.OpenDriverControl("..", "bind").status().code(), StatusCode::kInvalidArgument);
  // A driver directory that is a symlink elsewhere gets no fd.
  fs::create_directories(tmp_.path() + "/elsewhere");
  std::ofstream(tmp_.path() + "/elsewhere/bind");
  fs::create_directory_symlink(tmp_.path() + "/elsewhere", drivers + "/nvme");
  EXPECT_FALSE(live_.OpenDriverControl("nvme", "bind").ok());
}

}  // namespace
}  // namespace hcashare::hostfacts
