// The rules every deployment of the network resources injector (hcashare-webhook) must
// hold, whether from kustomize (deploy/k8s/injector) or the Helm chart with any values: RBAC
// that reads NetworkAttachmentDefinitions and nothing else, an unprivileged Deployment
// that survives a node loss, a Service and a webhook configuration that reach it, send it
// only new pods that name networks (matchConditions), outside the system namespaces and
// its own, over admission v1 with no side effects and a short timeout, and a CA the API
// server can trust it by. tests/deploy_injector_test.cc shows that the checker catches each
// broken rule.
#pragma once

#include <string>
#include <vector>

#include "tests/deploy_support.h"

namespace hcashare::deploy {

// What an injector deployment is expected to say where deployments differ.
struct InjectorExpect {
  std::string name = "hcashare-injector";  // every object's name
  std::string namespace_ = "kube-system";
  std::string image = "registry.example.com/hcashare/hcashare:0.1.0";
  std::string secret = "hcashare-injector-tls";  // the serving certificate's Secret
  std::string failure_policy = "Fail";
  int replicas = 2;
  // Where the caBundle comes from: "certManager" (the inject-ca-from annotation and its
  // Certificate), "bundle" (a caBundle in the object) or "none" (deploy/k8s/injector/webhook,
  // whose caBundle scripts/injector-certs.sh sets).
  std::string ca = "certManager";
};

// The namespaces every injector configuration leaves out, besides its own.
extern const std::vector<std::string> kSystemNamespaces;

// Our rules for the injector's objects among `objs`; returns every broken one ({} when
// they hold them all).
std::vector<std::string> CheckInjector(const std::vector<json>& objs, const InjectorExpect& e);

// The objects of `objs` that belong to the injector (app.kubernetes.io/name
// hcashare-injector), in their order.
std::vector<json> InjectorObjects(const std::vector<json>& objs);

}  // namespace hcashare::deploy
