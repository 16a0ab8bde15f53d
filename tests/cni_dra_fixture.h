// CniPodTest for pods with DRA claims: two VFs (0000:5e:00.2 and .3) that the device plugin
// gives nobody, the kubelet's pod-resources server (fake, on the test's kubelet root) and
// the DRA driver's checkpoint file, which the tests fill.
#pragma once

#include <memory>
#include <string>

#include "interop/dra_checkpoint.h"
#include "interop/dra_network_status.h"
#include "testing/fake_podresources.h"
#include "tests/cni_binary_fixture.h"

namespace hcashare::cni {

class CniDraPodTest : public CniPodTest {
 protected:
  static constexpr char kDriver[] = "rdma.hcashare.io";
  static constexpr char kResource[] = "rdma/hca_vfs";

  void SetUp() override {
    CniPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    vf0_ = AddVf(2);
    vf1_ = AddVf(3);
    allocated_.clear();  // nothing through the device plugin
    WriteCheckpoint();
    kubelet_ = std::make_unique<fake::FakePodResources>(tmp_.path() +
                                                        "/kubelet/pod-resources/kubelet.sock");
    ASSERT_TRUE(kubelet_->Start().ok());
  }

  // Pod ns/pod-a (uid-a) whose container "main" holds claim "rails": both VFs.
  void AddRailsPod() {
    kubelet_->AddPod("ns", "pod-a", "uid-a",
                     {{"main",
                       {},
                       {{"ns", "rails", kDriver, "node-a", "pci-0000-5e-00-2", {}},
                        {"ns", "rails", kDriver, "node-a", "pci-0000-5e-00-3", {}}}}});
  }

  // A device of pool node-a, prepared for request `request`, at `address`.
  static dra::PreparedDevice Device(const std::string& device, const std::string& address,
                                    const std::string& request = "nic") {
    dra::PreparedDevice d;
    d.request_names = {request};
    d.pool = "node-a";
    d.device = device;
    d.pci_address = address;
    d.resource = kResource;
    return d;
  }

  // Claim ns/rails (uid-claim) preparing both VFs for its request "rails", the first named
  // rdma0 in the pod, at MTU 9000.
  dra::PreparedClaim RailsClaim() const {
    dra::PreparedClaim c;
    c.uid = "uid-claim";
    c.namespace_name = "ns";
    c.name = "rails";
    c.devices = {Device("pci-0000-5e-00-2", vf0_, "rails"),
                 Device("pci-0000-5e-00-3", vf1_, "rails")};
    c.devices[0].interface_name = "rdma0";
    c.devices[0].mtu = 9000;
    return c;
  }

  // Adds (or replaces) `claim` in the driver's checkpoint file.
  void PutClaim(const dra::PreparedClaim& claim) {
    auto cp = dra::Checkpoint::Load(dra::CheckpointPath(tmp_.path() + "/kubelet", kDriver));
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    ASSERT_TRUE(cp->Put(claim).ok());
  }

  // Where the DRA step writes the claims' network status (interop/dra_network_status.h).
  std::string NetworkStatusDir() const {
    return dra::NetworkStatusDir(tmp_.path() + "/kubelet", kDriver);
  }

  std::string vf0_, vf1_;
  std::unique_ptr<fake::FakePodResources> kubelet_;
};

}  // namespace hcashare::cni
