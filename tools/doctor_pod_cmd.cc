// `hcashare doctor --pod NS/NAME`: reads the pod and its NetworkAttachmentDefinitions from
// the API server and prints doctor::CheckPodNetworks's results.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "doctor/pod_networks.h"
#include "doctor/report.h"
#include "injector/networks.h"
#include "json/dump.h"
#include "json/parse.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "metrics/registry.h"
#include "tools/commands.h"
#include "webhook/nad_source.h"

namespace hcashare::cli {
namespace {

constexpr std::chrono::milliseconds kTimeout{10000};

// --kubeconfig, else $KUBECONFIG's first file, else ~/.kube/config when it exists, else ""
// (the in-cluster config), as kubectl looks.
std::string KubeconfigPath(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::string first = env;
    return first.substr(0, first.find(':'));
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    const std::string path = std::string(home) + "/.kube/config";
    if (access(path.c_str(), R_OK) == 0) return path;
  }
  return "";
}

int Fail(const std::string& message) {
  std::cerr << "hcashare doctor --pod: " << message << "\n";
  return 2;
}

}  // namespace

int RunPodDoctor(const DoctorOptions& opts) {
  const size_t slash = opts.pod.find('/');
  const std::string ns = slash == std::string::npos ? "" : opts.pod.substr(0, slash);
  const std::string name = slash == std::string::npos ? "" : opts.pod.substr(slash + 1);
  if (!injector::IsDns1123Label(ns) || !injector::IsDns1123Subdomain(name)) {
    return Fail("\"" + opts.pod + "\": expected NAMESPACE/NAME");
  }
  Result<kube::ClusterConfig> cluster =
      kube::LoadClusterConfig(KubeconfigPath(opts.kubeconfig), "");
  if (!cluster.ok()) return Fail(cluster.status().message());
  kube::RestOptions ro;
  ro.user_agent = kube::UserAgent("hcashare-doctor");
  ro.timeout = kTimeout;
  Result<std::unique_ptr<kube::RestClient>> client = kube::RestClient::Create(*cluster, ro);
  if (!client.ok()) return Fail(client.status().message());
  Result<kube::Response> got = (*client)->Get("/api/v1/namespaces/" + ns + "/pods/" + name);
  if (!got.ok()) return Fail("pod " + opts.pod + ": " + got.status().message());
  Result<nlohmann::json> pod = jsonin::ParseJson(got->body, {/*max_depth=*/128});
  if (!pod.ok() || !pod->is_object()) return Fail("pod " + opts.pod + ": not a JSON object");

  metrics::Registry unused;
  webhook::NadSource nads(nullptr, client->get(), unused, kTimeout);
  const std::vector<doctor::CheckResult> results = doctor::CheckPodNetworks(*pod, nads);
  if (opts.json) {
    std::cout << DumpJson(doctor::ToJson(results), 2) << "\n";
  } else {
    std::cout << "pod " << opts.pod << " (" << cluster->source << ")\n"
              << doctor::FormatText(results);
  }
  return doctor::AnyFailed(results) ? 1 : 0;
}

}  // namespace hcashare::cli
