// hcashare-e2e-kubelet: the kubelet's side of the device-plugin protocol for the
// real-kernel VM suite (tests/e2e/vm), driven from a shell script.
//
//   watch --root DIR --resource NAME [--resource NAME...] --log FILE
//       Serves DIR/device-plugins/kubelet.sock (FakeKubelet, classic registration) and
//       appends one line to FILE per ListAndWatch message of each named resource:
//         <uptime-ms> <resource> n=<count> <id>:<health>,...
//       and one "endpoint=<socket>" line per new registration. <uptime-ms> is
//       CLOCK_BOOTTIME, the clock of /proc/uptime, so the script can compare it with the
//       moment it changed the kernel. Runs until killed.
//   allocate --socket PATH --ids ID[,ID...]
//       Calls Allocate on the plugin at PATH with one container request and prints the
//       response as JSON (tools/allocate_json.h).
//   dra-api --kubeconfig FILE --node NAME --claim-device DEVICE --uid-file FILE --log FILE
//           [--driver NAME] [--ns NS] [--name NAME]
//       An API server for the daemon's DRA side: the fake API server with a CA made
//       in-process, the Node and one ResourceClaim (default e2e/rxe-claim) allocating DEVICE;
//       writes the kubeconfig, then the claim's UID, logs the driver's published devices to
//       --log and serves until killed (e2e_dra.h).
//   dra-prepare|dra-unprepare --root DIR --uid UID [--driver NAME] [--ns NS] [--name NAME]
//       Registers the DRA driver through DIR/plugins_registry as the kubelet does, calls
//       NodePrepareResources / NodeUnprepareResources (v1) for the claim and prints the
//       answer as JSON.
//   cdi-nodes --spec FILE --id CDI_ID
//       Prints the device nodes the CDI device CDI_ID of the spec FILE gives a container.
//   podres --root DIR --pod NAME --uid UID --pool POOL --device DEVICE [--driver NAME]
//          [--ns NS] [--name CLAIM]
//       Serves DIR/pod-resources/kubelet.sock (FakePodResources) with pod NS/NAME whose
//       container "main" holds claim NS/CLAIM's DEVICE of POOL, as the kubelet reports a
//       prepared claim to hcashare-cni's DRA step; runs until killed.
//   nri-runtime --socket PATH --event run|stop --pod NAME --uid UID --sandbox ID --netns PATH
//               [--ns NS]
//       A container runtime's NRI (testing/fake_nri_runtime.h) on PATH: waits up to 20 s for
//       a plugin, configures it, synchronizes pod NS/NAME (sandbox ID, network namespace
//       PATH; none for "run", as a pod not yet started), sends the one event and prints
//       "ok" or the plugin's refusal; then closes, as a runtime restart would.
//
// Exit status: 0 on success, 1 on an RPC or I/O error, 2 on bad arguments.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/strings.h"
#include "deviceplugin/api/deviceplugin_v1beta1.grpc.pb.h"
#include "testing/fake_kubelet.h"
#include "testing/fake_nri_runtime.h"
#include "testing/fake_podresources.h"
#include "tests/e2e/vm/e2e_dra.h"
#include "tools/allocate_json.h"

namespace hcashare::e2e {
namespace {

using Clock = std::chrono::steady_clock;

// The value after flag `name` in argv, or "" (all flags take a value).
std::vector<std::string> FlagValues(int argc, char** argv, const std::string& name) {
  std::vector<std::string> out;
  for (int i = 2; i + 1 < argc; ++i) {
    if (argv[i] == name) out.push_back(argv[i + 1]);
  }
  return out;
}

std::string Flag(int argc, char** argv, const std::string& name, const std::string& dflt = "") {
  auto v = FlagValues(argc, argv, name);
  return v.empty() ? dflt : v.back();
}

// "id:Healthy,id:Unhealthy" for a device list.
std::string DeviceText(const std::vector<v1beta1::Device>& devices) {
  std::vector<std::string> parts;
  for (const auto& d : devices) parts.push_back(d.id() + ":" + d.health());
  return Join(parts, ",");
}

int Watch(const std::string& root, const std::vector<std::string>& resources,
          const std::string& log_path) {
  fake::FakeKubelet kubelet(root);
  if (Status st = kubelet.Start(); !st.ok()) {
    std::cerr << "cannot serve kubelet.sock: " << st.ToString() << "\n";
    return 1;
  }
  std::ofstream log(log_path, std::ios::app);
  if (!log) {
    std::cerr << "cannot open " << log_path << "\n";
    return 1;
  }
  std::map<std::string, int> seen_lists, seen_registrations;
  for (;;) {
    for (const auto& r : resources) {
      const fake::ResourceView v = kubelet.View(r);
      if (v.registrations != seen_registrations[r]) {
        seen_registrations[r] = v.registrations;
        log << BoottimeMs() << " " << r << " endpoint=" << v.endpoint << std::endl;
      }
      if (v.lists_received == seen_lists[r]) continue;
      seen_lists[r] = v.lists_received;
      const auto age =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - v.last_list_at);
      log << BoottimeMs() - age.count() << " " << r << " n=" << v.devices.size() << " "
          << DeviceText(v.devices) << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int Allocate(const std::string& socket, const std::string& ids) {
  auto channel = grpc::CreateChannel("unix://" + socket, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  v1beta1::AllocateRequest req;
  auto* container = req.add_container_requests();
  std::istringstream in(ids);
  for (std::string id; std::getline(in, id, ',');) container->add_devices_ids(id);
  v1beta1::AllocateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status st = stub->Allocate(&ctx, req, &resp);
  if (!st.ok()) {
    std::cerr << "Allocate: " << st.error_message() << "\n";
    return 1;
  }
  std::cout << cli::AllocateResponseJson(resp).dump(2) << "\n";
  return 0;
}

// Serves the pod-resources socket under `root` with one pod holding one claim device.
int PodResources(const std::string& root, const std::string& ns, const std::string& pod,
                 const std::string& uid, const fake::FakeClaimDevice& device) {
  fake::FakePodResources server(root + "/pod-resources/kubelet.sock");
  if (Status st = server.Start(); !st.ok()) {
    std::cerr << "pod-resources: " << st.ToString() << "\n";
    return 1;
  }
  server.AddPod(ns, pod, uid, {{"main", {}, {device}}});
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

int Usage() {
  std::cerr << "usage: hcashare-e2e-kubelet watch --root DIR --resource NAME... --log FILE\n"
               "       hcashare-e2e-kubelet allocate --socket PATH --ids ID[,ID...]\n"
               "       hcashare-e2e-kubelet dra-api --kubeconfig FILE --node NAME --claim-device "
               "DEVICE --uid-file FILE --log FILE [--driver NAME] [--ns NS] [--name NAME]\n"
               "       hcashare-e2e-kubelet dra-prepare|dra-unprepare --root DIR --uid UID "
               "[--driver NAME] [--ns NS] [--name NAME]\n"
               "       hcashare-e2e-kubelet cdi-nodes --spec FILE --id CDI_ID\n"
               "       hcashare-e2e-kubelet podres --root DIR --pod NAME --uid UID --pool POOL "
               "--device DEVICE [--driver NAME] [--ns NS] [--name CLAIM]\n"
               "       hcashare-e2e-kubelet nri-runtime --socket PATH --event run|stop --pod "
               "NAME --uid UID --sandbox ID --netns PATH [--ns NS]\n";
  return 2;
}

// nri-runtime: one session of a runtime's NRI with the plugin that connects.
int NriRuntime(const std::string& socket, const std::string& event,
               const hcashare::fake::NriPod& pod) {
  hcashare::fake::FakeNriRuntimeOptions o;
  o.runtime_name = "hcashare-e2e";
  o.request_timeout = std::chrono::milliseconds(30000);
  hcashare::fake::FakeNriRuntime runtime(socket, o);
  if (hcashare::Status st = runtime.Listen(); !st.ok()) {
    std::cerr << st.ToString() << "\n";
    return 1;
  }
  std::vector<hcashare::fake::NriPod> pods;
  if (event != "run") pods.push_back(pod);
  if (hcashare::Status st = runtime.AcceptPlugin(pods, std::chrono::milliseconds(20000));
      !st.ok()) {
    std::cerr << "no plugin: " << st.ToString() << "\n";
    return 1;
  }
  const hcashare::Status st =
      event == "run" ? runtime.RunPodSandbox(pod) : runtime.StopPodSandbox(pod);
  std::cout << (st.ok() ? std::string("ok") : st.message()) << std::endl;
  return st.ok() && runtime.connected() ? 0 : 1;
}

}  // namespace
}  // namespace hcashare::e2e

int main(int argc, char** argv) {
  using namespace hcashare::e2e;
  if (argc < 2) return Usage();
  const std::string cmd = argv[1];
  if (cmd == "watch") {
    const std::string root = Flag(argc, argv, "--root");
    const std::string log = Flag(argc, argv, "--log");
    const auto resources = FlagValues(argc, argv, "--resource");
    if (root.empty() || log.empty() || resources.empty()) return Usage();
    return Watch(root, resources, log);
  }
  if (cmd == "allocate") {
    const std::string socket = Flag(argc, argv, "--socket");
    const std::string ids = Flag(argc, argv, "--ids");
    if (socket.empty() || ids.empty()) return Usage();
    return Allocate(socket, ids);
  }
  const std::string driver = Flag(argc, argv, "--driver", "rdma.hcashare.io");
  const std::string ns = Flag(argc, argv, "--ns", "e2e");
  const std::string name = Flag(argc, argv, "--name", "rxe-claim");
  if (cmd == "dra-api") {
    const DraApiOptions o{Flag(argc, argv, "--kubeconfig"),
                          Flag(argc, argv, "--node"),
                          driver,
                          ns,
                          name,
                          Flag(argc, argv, "--claim-device"),
                          Flag(argc, argv, "--uid-file"),
                          Flag(argc, argv, "--log")};
    if (o.kubeconfig.empty() || o.node.empty() || o.claim_device.empty() || o.uid_file.empty() ||
        o.slices_log.empty()) {
      return Usage();
    }
    return DraApi(o);
  }
  if (cmd == "dra-prepare" || cmd == "dra-unprepare") {
    const DraClaimRef c{Flag(argc, argv, "--root"), driver, ns, name, Flag(argc, argv, "--uid")};
    if (c.kubelet_root.empty() || c.uid.empty()) return Usage();
    return cmd == "dra-prepare" ? DraPrepare(c) : DraUnprepare(c);
  }
  if (cmd == "podres") {
    const std::string root = Flag(argc, argv, "--root");
    const std::string pod = Flag(argc, argv, "--pod");
    const std::string uid = Flag(argc, argv, "--uid");
    const hcashare::fake::FakeClaimDevice device{
        ns, name, driver, Flag(argc, argv, "--pool"), Flag(argc, argv, "--device"), {}};
    if (root.empty() || pod.empty() || uid.empty() || device.pool.empty() ||
        device.device.empty()) {
      return Usage();
    }
    return PodResources(root, ns, pod, uid, device);
  }
  if (cmd == "nri-runtime") {
    const std::string socket = Flag(argc, argv, "--socket");
    const std::string event = Flag(argc, argv, "--event");
    const hcashare::fake::NriPod pod{Flag(argc, argv, "--sandbox"), Flag(argc, argv, "--pod"),
                                     Flag(argc, argv, "--uid"), ns, Flag(argc, argv, "--netns")};
    if (socket.empty() || (event != "run" && event != "stop") || pod.id.empty() ||
        pod.name.empty() || pod.uid.empty() || pod.netns.empty()) {
      return Usage();
    }
    return NriRuntime(socket, event, pod);
  }
  if (cmd == "cdi-nodes") {
    const std::string spec = Flag(argc, argv, "--spec");
    const std::string id = Flag(argc, argv, "--id");
    if (spec.empty() || id.empty()) return Usage();
    return CdiNodes(spec, id);
  }
  return Usage();
}
