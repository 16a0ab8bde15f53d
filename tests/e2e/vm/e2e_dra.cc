// The DRA subcommands of hcashare-e2e-kubelet: see e2e_dra.h.
#include "tests/e2e/vm/e2e_dra.h"

#include <time.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/safe_file.h"
#include "common/strings.h"
#include "testing/fake_apiserver.h"
#include "testing/fake_dra_kubelet.h"
#include "testing/test_pki.h"

namespace hcashare::e2e {
namespace {

using json = nlohmann::json;
namespace drav1 = k8s::io::kubelet::pkg::apis::dra::v1;

constexpr char kNodes[] = "/api/v1/nodes";
constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";
constexpr size_t kMaxCdiSpecBytes = 1 << 20;

// "<device>:<rdmaDevice>:<healthy>,..." of `driver`'s published devices, and their number.
std::string PublishedDevices(const fake::FakeApiServer& api, const std::string& driver,
                             size_t* count) {
  std::vector<std::string> parts;
  for (const json& slice : api.List(kSlices)) {
    if (slice["spec"].value("driver", "") != driver) continue;
    for (const json& d : slice["spec"].value("devices", json::array())) {
      const json attrs = d.value("attributes", json::object());
      const json rdma = attrs.value("rdmaDevice", json::object());
      const json healthy = attrs.value("healthy", json::object());
      parts.push_back(d.value("name", "?") + ":" + rdma.value("string", "?") + ":" +
                      (healthy.contains("bool") ? healthy["bool"].dump() : "?"));
    }
  }
  *count = parts.size();
  return Join(parts, ",");
}

int Fail(const std::string& what, const Status& st) {
  std::cerr << what << ": " << st.ToString() << "\n";
  return 1;
}

// The call's claim list: the one claim of `c`.
std::vector<fake::FakeClaim> Claims(const DraClaimRef& c) { return {{c.ns, c.uid, c.name}}; }

}  // namespace

long long BoottimeMs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int DraApi(const DraApiOptions& o) {
  auto pki = fake::TestPki::Create("hcashare-e2e-ca");
  if (!pki.ok()) return Fail("test CA", pki.status());
  auto api = fake::FakeApiServer::Start(pki->get());
  if (!api.ok()) return Fail("fake API server", api.status());
  fake::FakeApiServer& server = **api;
  server.Seed(kNodes, {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", o.node}}}});
  json claim = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", {{"name", o.claim_name}, {"namespace", o.claim_ns}}}};
  claim["spec"]["devices"]["requests"] = json::array();
  claim["status"]["allocation"]["devices"]["results"] = json::array(
      {{{"request", "nic"}, {"driver", o.driver}, {"pool", o.node}, {"device", o.claim_device}}});
  const std::string claims =
      "/apis/resource.k8s.io/v1/namespaces/" + o.claim_ns + "/resourceclaims";
  server.Seed(claims, claim);
  const std::string uid = server.Get(claims, o.claim_name)["metadata"].value("uid", "");

  const std::string ca_path = o.kubeconfig + ".ca.pem";
  if (Status st = WriteFileAtomically(ca_path, (*pki)->ca_pem()); !st.ok()) {
    return Fail("CA file", st);
  }
  const std::string kubeconfig =
      "apiVersion: v1\nkind: Config\ncurrent-context: e2e\n"
      "clusters:\n- name: fake\n  cluster:\n    server: " +
      server.url() + "\n    certificate-authority: " + ca_path +
      "\nusers:\n- name: u\n  user:\n    token: test-token\n"
      "contexts:\n- name: e2e\n  context: {cluster: fake, user: u}\n";
  if (Status st = WriteFileAtomically(o.kubeconfig, kubeconfig, 0600); !st.ok()) {
    return Fail("kubeconfig", st);
  }
  if (Status st = WriteFileAtomically(o.uid_file, uid + "\n"); !st.ok()) {
    return Fail("UID file", st);
  }
  std::cout << "serving " << server.url() << ", claim " << o.claim_ns << "/" << o.claim_name
            << " uid " << uid << std::endl;

  std::ofstream log(o.slices_log, std::ios::app);
  if (!log) {
    std::cerr << "cannot open " << o.slices_log << "\n";
    return 1;
  }
  std::string last = "-";
  for (;;) {
    size_t n = 0;
    const std::string now = PublishedDevices(server, o.driver, &n);
    if (now != last) {
      last = now;
      log << BoottimeMs() << " n=" << n << " " << now << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int DraPrepare(const DraClaimRef& c) {
  fake::FakeDraKubelet kubelet(c.kubelet_root);
  if (auto reg = kubelet.Register(c.driver); !reg.ok()) return Fail("register", reg.status());
  auto resp = kubelet.Prepare(fake::DraApi::kV1, Claims(c));
  if (!resp.ok()) return Fail("NodePrepareResources", resp.status());
  json out = {{"claims", json::object()}};
  bool errors = false;
  for (const auto& [uid, claim] : resp->claims()) {
    json devices = json::array();
    for (const drav1::Device& d : claim.devices()) {
      devices.push_back(
          {{"requestNames",
            json(std::vector<std::string>(d.request_names().begin(), d.request_names().end()))},
           {"poolName", d.pool_name()},
           {"deviceName", d.device_name()},
           {"cdiDeviceIds",
            json(std::vector<std::string>(d.cdi_device_ids().begin(), d.cdi_device_ids().end()))}});
    }
    out["claims"][uid] = {{"error", claim.error()}, {"devices", devices}};
    errors = errors || !claim.error().empty();
  }
  std::cout << out.dump(2) << "\n";
  return errors || !resp->claims().count(c.uid) ? 1 : 0;
}

int DraUnprepare(const DraClaimRef& c) {
  fake::FakeDraKubelet kubelet(c.kubelet_root);
  if (auto reg = kubelet.Register(c.driver); !reg.ok()) return Fail("register", reg.status());
  auto resp = kubelet.Unprepare(fake::DraApi::kV1, Claims(c));
  if (!resp.ok()) return Fail("NodeUnprepareResources", resp.status());
  json out = {{"claims", json::object()}};
  bool errors = false;
  for (const auto& [uid, claim] : resp->claims()) {
    out["claims"][uid] = {{"error", claim.error()}};
    errors = errors || !claim.error().empty();
  }
  std::cout << out.dump(2) << "\n";
  return errors || !resp->claims().count(c.uid) ? 1 : 0;
}

int CdiNodes(const std::string& spec_path, const std::string& cdi_id) {
  const auto eq = cdi_id.find('=');
  if (eq == std::string::npos) {
    std::cerr << "CDI ID \"" << cdi_id << "\" is not <vendor>/<class>=<name>\n";
    return 2;
  }
  const std::string kind = cdi_id.substr(0, eq);
  const std::string name = cdi_id.substr(eq + 1);
  SafeReadOptions read;
  read.max_bytes = kMaxCdiSpecBytes;
  read.what = "CDI spec";
  auto text = ReadFileSafely(spec_path, read);
  if (!text.ok()) return Fail("CDI spec", text.status());
  const json spec = json::parse(*text, nullptr, false);
  if (!spec.is_object()) {
    std::cerr << "CDI spec " << spec_path << " is not a JSON object\n";
    return 1;
  }
  if (spec.value("kind", "") != kind) {
    std::cerr << "CDI spec " << spec_path << " is of kind \"" << spec.value("kind", "")
              << "\", not " << kind << "\n";
    return 1;
  }
  std::vector<json> edits = {spec.value("containerEdits", json::object())};
  bool found = false;
  for (const json& d : spec.value("devices", json::array())) {
    if (d.value("name", "") != name) continue;
    edits.push_back(d.value("containerEdits", json::object()));
    found = true;
  }
  if (!found) {
    std::cerr << "CDI spec " << spec_path << " has no device " << name << "\n";
    return 1;
  }
  for (const json& e : edits) {
    for (const json& node : e.value("deviceNodes", json::array())) {
      const std::string path = node.value("path", "");
      const std::string host = node.value("hostPath", path);
      if (path.empty() || host != path) {
        std::cerr << "device node " << node.dump() << " is not one host path at the same place\n";
        return 1;
      }
      std::cout << path << "\n";
    }
  }
  return 0;
}

}  // namespace hcashare::e2e
