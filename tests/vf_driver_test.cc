// cni/vf_driver.h on a fixture tree in the real sysfs layout: the rebind writes the VF's
// address to the unbind and then the bind file of the driver the kernel's `driver` link
// names, and says so when the VF is left unbound.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cni/vf_driver.h"
#include "common/host.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"

namespace hcashare::cni {
namespace {

namespace fs = std::filesystem;

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
  std::string Driver() const { return tmp_.path() + "/host/sys/bus/pci/drivers/mlx5_core"; }
  std::string Read(const std::string& name) const {
    std::ifstream in(Driver() + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  static constexpr const char* kVf = "0000:7e:00.1";
  TempDir tmp_;
  fake::SimNode node_{tmp_.path() + "/host"};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path() + "/host");
};

TEST_F(VfDriverTest, UnbindsThenBindsTheDriverTheKernelNames) {
  auto driver = NewSysfsVfDriver(*host_);
  ASSERT_TRUE(driver->Rebind(kVf).ok());
  EXPECT_EQ(Read("unbind"), kVf);
  EXPECT_EQ(Read("bind"), kVf);
}

TEST_F(VfDriverTest, AnUnboundFunctionIsAnError) {
  const Status st = NewSysfsVfDriver(*host_)->Rebind("0000:7e:00.2");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("bound to no driver"), std::string::npos) << st.message();
  EXPECT_EQ(Read("unbind"), "");  // nothing was written
}

TEST_F(VfDriverTest, AFailedBindSaysTheFunctionIsLeftUnbound) {
  fs::remove(Driver() + "/bind");
  fs::create_directory(Driver() + "/bind");  // open(O_WRONLY) fails: EISDIR
  const Status st = NewSysfsVfDriver(*host_)->Rebind(kVf);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is left unbound from mlx5_core"), std::string::npos) << st.message();
  EXPECT_EQ(Read("unbind"), kVf);
}

}  // namespace
}  // namespace hcashare::cni
