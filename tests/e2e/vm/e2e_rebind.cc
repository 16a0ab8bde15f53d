// hcashare-e2e-rebind: the VF rebind of the CNI (cni/vf_rebind.h, cni/vf_driver.h, CmdDel)
// on a real VF in the real-kernel VM suite (guest-tests.sh), where an unbind really destroys
// the VF's netdev and a bind really creates a new one (new ifindex, the kernel's name). A
// bind is made to fail the kernel's own way: the VF's `driver_override` names another driver,
// so the VF's driver no longer matches it and its `bind` answers ENODEV.
//
//   hcashare-e2e-rebind rebind PCI     a rebind: the netdev is new and has its name back
//   hcashare-e2e-rebind undo PCI       a failed bind leaves the VF unbound (reported with
//                                      the manual fix); ADD's undo binds it once the cause
//                                      is gone
//   hcashare-e2e-rebind del PCI        the same, left to DEL: CmdDel fails (unbound, not
//                                      "another namespace") while the bind fails, then binds
//                                      the VF, and the attachment is released
// Exit status 0 when every expectation held; each failure is printed.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cni/attach.h"
#include "cni/netconf.h"
#include "cni/state.h"
#include "cni/vf_driver.h"
#include "cni/vf_rebind.h"
#include "common/host.h"
#include "common/temp_dir.h"
#include "hostfacts/live.h"
#include "nl/netdev.h"
#include "nl/rdma_netlink.h"
#include "nl/sriov.h"

namespace hcashare::cni {
namespace {

int failures = 0;

void Expect(bool ok, const std::string& what) {
  std::cout << (ok ? "ok: " : "FAILED: ") << what << std::endl;
  failures += !ok;
}

// Writes the VF's driver_override: another driver's name makes its own driver's bind fail.
bool SetOverride(const std::string& pci, const std::string& value) {
  std::ofstream out("/sys/bus/pci/devices/" + pci + "/driver_override");
  out << value << "\n";
  out.flush();
  return static_cast<bool>(out);
}

class Rig {
 public:
  explicit Rig(const std::string& pci)
      : host_(NewRootedHost("/")),
        netdev_(NewNetlinkNetdevOps()),
        vf_(NewNetlinkVfOps()),
        rdma_(NewRdmaNetlink()),
        store_(tmp_.path() + "/state"),
        driver_(NewSysfsVfDriver(*host_)),
        ctx_{*host_, *netdev_, *vf_, *rdma_, store_, nullptr} {
    ctx_.vf_driver = driver_.get();
    state_.owner = {"e2e-rebind", "net1", "", "", "", ""};
    state_.device = pci;
    auto bound = driver_->BoundDriver(pci);
    state_.vf_driver = bound.ok() ? *bound : "";
    const auto names = hostfacts::LiveFacts(*host_).Netdevs(hostfacts::PciOrAux(pci, false));
    state_.host_ifname = names.empty() ? "" : names.front();
    if (auto link = netdev_->Get(state_.host_ifname); link.ok()) {
      state_.host_up = link->admin_up;
      ifindex_ = link->ifindex;
    }
    state_.steps = {"pf:guid"};  // ADD set a GUID: DEL rebinds
    std::cout << pci << ": driver " << state_.vf_driver << ", netdev " << state_.host_ifname
              << " (ifindex " << ifindex_ << ")" << std::endl;
  }

  bool Ready() const { return !state_.vf_driver.empty() && !state_.host_ifname.empty(); }
  const AttachmentState& state() const { return state_; }
  const AttachContext& ctx() const { return ctx_; }
  const StateStore& store() const { return store_; }

  // The VF is bound to its driver again and its netdev is a new one with its host name.
  void ExpectBackAndNew(const std::string& when) {
    auto bound = driver_->BoundDriver(state_.device);
    Expect(bound.ok() && *bound == state_.vf_driver, when + ": bound to " + state_.vf_driver);
    auto link = netdev_->Get(state_.host_ifname);
    Expect(link.ok(), when + ": netdev " + state_.host_ifname + " is there");
    if (link.ok()) {
      Expect(link->ifindex != ifindex_, when + ": it is a new netdev (ifindex " +
                                            std::to_string(ifindex_) + " -> " +
                                            std::to_string(link->ifindex) + ")");
      ifindex_ = link->ifindex;
    }
  }
  void ExpectUnbound(const std::string& when) {
    auto bound = driver_->BoundDriver(state_.device);
    Expect(bound.ok() && bound->empty(), when + ": the VF is bound to no driver");
    Expect(hostfacts::LiveFacts(*host_).Netdevs(hostfacts::PciOrAux(state_.device, false)).empty(),
           when + ": its netdev is gone");
  }
  void ExpectUnboundError(const Status& st, const std::string& when) {
    const std::string text = st.message() + " " + st.details();
    Expect(!st.ok(), when + " fails: " + text);
    Expect(text.find("left bound to no driver") != std::string::npos,
           when + ": the error says the VF is unbound");
    Expect(text.find("echo " + state_.device + " > /sys/bus/pci/drivers/" + state_.vf_driver +
                     "/bind") != std::string::npos,
           when + ": the error gives the manual fix");
    Expect(text.find("another namespace") == std::string::npos,
           when + ": the error blames no namespace");
  }

 private:
  TempDir tmp_{"hcashare-e2e-rebind-"};
  std::unique_ptr<Host> host_;
  std::unique_ptr<NetdevOps> netdev_;
  std::unique_ptr<VfOps> vf_;
  std::unique_ptr<RdmaSystem> rdma_;
  StateStore store_;
  std::unique_ptr<VfDriver> driver_;
  AttachContext ctx_;
  AttachmentState state_;
  int ifindex_ = 0;
};

int Run(const std::string& what, const std::string& pci) {
  Rig rig(pci);
  if (!rig.Ready()) {
    std::cout << "FAILED: " << pci << " has no driver or no netdev" << std::endl;
    return 1;
  }
  if (what == "rebind") {
    Status st = RebindVf(rig.state(), rig.ctx(), "");
    Expect(st.ok(), "the rebind: " + st.ToString());
    rig.ExpectBackAndNew("after the rebind");
  } else if (what == "undo" || what == "del") {
    Expect(SetOverride(pci, "hcashare-none"), "driver_override names another driver");
    rig.ExpectUnboundError(RebindVf(rig.state(), rig.ctx(), ""), "the rebind (ADD)");
    rig.ExpectUnbound("after the failed bind");
    if (what == "undo") {
      Expect(SetOverride(pci, ""), "driver_override cleared");
      // What the GUID group's undo runs (cni/attach.cc): it finds the VF unbound.
      Status undo = RebindVf(rig.state(), rig.ctx(), "");
      Expect(undo.ok(), "the undo: " + undo.ToString());
      rig.ExpectBackAndNew("after the undo");
    } else {
      Expect(rig.store().Save(rig.state()).ok(), "the attachment is kept");
      auto conf =
          ParseNetConf(R"({"cniVersion":"1.0.0","name":"e2e","type":"hcashare-cni"})", Verb::kDel);
      Expect(conf.ok(), "a DEL configuration");
      if (!conf.ok()) return 1;
      CniEnv env;
      env.verb = Verb::kDel;
      env.command = "DEL";
      env.container_id = rig.state().owner.container_id;
      env.ifname = rig.state().owner.ifname;
      rig.ExpectUnboundError(CmdDel(env, *conf, rig.ctx()), "DEL while the bind still fails");
      Expect(rig.store().Load(env.container_id, env.ifname).ok(), "DEL kept the attachment");
      Expect(SetOverride(pci, ""), "driver_override cleared");
      Status del = CmdDel(env, *conf, rig.ctx());
      Expect(del.ok(), "DEL: " + del.ToString());
      Expect(rig.store().Load(env.container_id, env.ifname).status().IsNotFound(),
             "DEL released the attachment");
      rig.ExpectBackAndNew("after DEL");
    }
  } else {
    std::cerr << "usage: hcashare-e2e-rebind rebind|undo|del PCI" << std::endl;
    return 2;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hcashare::cni

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: hcashare-e2e-rebind rebind|undo|del PCI" << std::endl;
    return 2;
  }
  return hcashare::cni::Run(argv[1], argv[2]);
}
