#include "tests/deploy_injector_rules.h"

#include <algorithm>
#include <map>
#include <set>

namespace hcashare::deploy {

const std::vector<std::string> kSystemNamespaces = {"kube-system", "kube-public",
                                                    "kube-node-lease"};

namespace {

// The annotation the webhook acts on, and the one that has cert-manager inject the CA.
const std::string kNetworksAnnotation = "k8s.v1.cni.cncf.io/networks";
const std::string kInjectCaFrom = "cert-manager.io/inject-ca-from";
// The API server's own default timeout; a webhook that needs more is broken.
constexpr int kMaxTimeoutSeconds = 10;
// The memory limit must hold 10,000 cached NADs and a page of the initial list.
constexpr long long kMinMemoryLimitBytes = 64LL << 20;

std::set<std::string> StringSet(const json& list) {
  std::set<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& v : list) {
    if (v.is_string()) out.insert(v.get<std::string>());
  }
  return out;
}

// Every label of `selector` (matchLabels) is on `labels`.
bool Selects(const json& selector, const json& labels) {
  if (!selector.is_object() || selector.empty() || !labels.is_object()) return false;
  for (const auto& [k, v] : selector.items()) {
    if (labels.value(k, json()) != v) return false;
  }
  return true;
}

}  // namespace

std::vector<json> InjectorObjects(const std::vector<json>& objs) {
  std::vector<json> out;
  for (const auto& o : objs) {
    const json labels = o.value("metadata", json::object()).value("labels", json::object());
    if (labels.value("app.kubernetes.io/name", "") == "hcashare-injector") out.push_back(o);
  }
  return out;
}

std::vector<std::string> CheckInjector(const std::vector<json>& objs, const InjectorExpect& e) {
  std::vector<std::string> bad;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) bad.push_back(what);
  };
  auto find = [&](const std::string& kind) -> const json* {
    const json* o = Find(objs, kind, e.name);
    check(o != nullptr, "no " + kind + " " + e.name);
    if (o != nullptr && kind != "ClusterRole" && kind != "ClusterRoleBinding" &&
        kind != "MutatingWebhookConfiguration") {
      check((*o)["metadata"].value("namespace", "") == e.namespace_,
            kind + " is not in namespace " + e.namespace_);
    }
    return o;
  };
  const json* sa = find("ServiceAccount");
  const json* role = find("ClusterRole");
  const json* binding = find("ClusterRoleBinding");
  const json* deploy = find("Deployment");
  const json* service = find("Service");
  const json* mwc = find("MutatingWebhookConfiguration");
  if (!sa || !role || !binding || !deploy || !service || !mwc) return bad;

  // RBAC: get, list and watch on NADs, nothing else, bound to the pods' ServiceAccount.
  const json rules = role->value("rules", json::array());
  check(rules.size() == 1,
        "the ClusterRole has " + std::to_string(rules.size()) + " rules, not one (NADs only)");
  for (const auto& r : rules) {
    check(
        StringSet(r.value("apiGroups", json::array())) == std::set<std::string>{"k8s.cni.cncf.io"},
        "ClusterRole: apiGroups is not [k8s.cni.cncf.io]");
    check(StringSet(r.value("resources", json::array())) ==
              std::set<std::string>{"network-attachment-definitions"},
          "ClusterRole: resources is not [network-attachment-definitions]");
    check(
        StringSet(r.value("verbs", json::array())) == std::set<std::string>{"get", "list", "watch"},
        "ClusterRole: verbs are not exactly get, list, watch");
    check(!r.contains("nonResourceURLs"), "ClusterRole: nonResourceURLs");
  }
  const json ref = binding->value("roleRef", json::object());
  check(ref.value("kind", "") == "ClusterRole" && ref.value("name", "") == e.name,
        "ClusterRoleBinding: roleRef is not ClusterRole " + e.name);
  const json subjects = binding->value("subjects", json::array());
  check(subjects.size() == 1 && subjects[0].value("kind", "") == "ServiceAccount" &&
            subjects[0].value("name", "") == e.name &&
            subjects[0].value("namespace", "") == e.namespace_,
        "ClusterRoleBinding: the subject is not ServiceAccount " + e.namespace_ + "/" + e.name);

  // The Deployment: replicas spread over nodes, a rolling update that never goes below them.
  const json dspec = deploy->value("spec", json::object());
  check(dspec.value("replicas", 1) == e.replicas,
        "Deployment: replicas is not " + std::to_string(e.replicas));
  const json pod_labels = dspec["template"]["metadata"]["labels"];
  const json selector = dspec["selector"]["matchLabels"];
  check(Selects(selector, pod_labels), "Deployment: the selector does not match the pod labels");
  const json rolling =
      dspec.value("strategy", json::object()).value("rollingUpdate", json::object());
  check(rolling.value("maxUnavailable", json(1)) == 0,
        "Deployment: the rolling update may take a replica down before its successor is ready");
  const json spec = PodSpec(*deploy);
  check(spec.value("serviceAccountName", "") == e.name,
        "Deployment: serviceAccountName is not " + e.name);
  check(spec.value("automountServiceAccountToken", true),
        "Deployment: no service account token (the webhook reads NADs from the API server)");
  check(!spec.value("hostNetwork", false), "Deployment: hostNetwork");
  bool spread = false;
  for (const auto& t : spec.value("topologySpreadConstraints", json::array())) {
    if (t.value("topologyKey", "") == "kubernetes.io/hostname" &&
        Selects(t["labelSelector"]["matchLabels"], pod_labels)) {
      spread = true;
    }
  }
  const json anti = spec.value("affinity", json::object()).value("podAntiAffinity", json::object());
  if (anti.dump().find("kubernetes.io/hostname") != std::string::npos) spread = true;
  check(e.replicas < 2 || spread, "Deployment: replicas are not spread over nodes");
  const json psc = spec.value("securityContext", json::object());
  check(psc.value("runAsNonRoot", false), "Deployment: runAsNonRoot is not true");
  check(psc.value("runAsUser", 0) == 65534, "Deployment: runAsUser is not 65534");
  check(psc.value("seccompProfile", json::object()).value("type", "") == "RuntimeDefault",
        "Deployment: seccompProfile is not RuntimeDefault");
  const json volumes = spec.value("volumes", json::array());
  for (const auto& v : volumes) {
    check(!v.contains("hostPath"), "Deployment: hostPath volume " + v.value("name", ""));
  }
  const json containers = spec.value("containers", json::array());
  check(containers.size() == 1 && !spec.contains("initContainers"),
        "Deployment: not exactly one container");
  if (containers.empty()) return bad;
  const json& c = containers[0];
  check(c.value("image", "") == e.image, "webhook: image is not " + e.image);
  check(c.value("command", json::array()) == json::array({"/usr/local/bin/hcashare-webhook"}),
        "webhook: command is not /usr/local/bin/hcashare-webhook");
  const json sc = c.value("securityContext", json::object());
  check(!sc.value("privileged", false), "webhook: privileged");
  check(!sc.value("allowPrivilegeEscalation", true), "webhook: allowPrivilegeEscalation");
  check(sc.value("readOnlyRootFilesystem", false), "webhook: readOnlyRootFilesystem is not true");
  check(sc.value("runAsUser", 65534) != 0, "webhook: runs as root");
  const json caps = sc.value("capabilities", json::object());
  check(StringSet(caps.value("drop", json::array())).count("ALL") == 1,
        "webhook: capabilities not dropped (drop: [ALL])");
  check(caps.value("add", json::array()).empty(), "webhook: capabilities added");

  // Its flags: the certificate files in the Secret's volume, the port the probes use.
  const auto args = ArgMap(c.value("args", json::array()));
  auto arg = [&](const std::string& f) { return args.count(f) ? args.at(f) : std::string(); };
  std::string secret_mount;
  for (const auto& m : c.value("volumeMounts", json::array())) {
    const json* v = Item(volumes, m.value("name", ""));
    if (v != nullptr && v->contains("secret") &&
        (*v)["secret"].value("secretName", "") == e.secret) {
      check(m.value("readOnly", false), "webhook: the certificate is mounted writable");
      check(!m.contains("subPath"),
            "webhook: the certificate is mounted with subPath (never renewed)");
      secret_mount = m.value("mountPath", "");
    }
  }
  check(!secret_mount.empty(), "webhook: Secret " + e.secret + " is not mounted");
  for (const auto& [flag, file] : std::map<std::string, std::string>{
           {"--tls-cert-file", "/tls.crt"}, {"--tls-private-key-file", "/tls.key"}}) {
    check(!secret_mount.empty() && arg(flag) == secret_mount + file,
          "webhook: " + flag + " is not " + secret_mount + file);
  }
  const std::string listen = args.count("--listen-address") ? arg("--listen-address") : ":8443";
  const std::string port = listen.substr(listen.rfind(':') + 1);
  std::map<std::string, std::string> named_ports;
  for (const auto& p : c.value("ports", json::array())) {
    named_ports[p.value("name", "")] = std::to_string(p.value("containerPort", 0));
  }
  auto port_of = [&](const json& p) {
    if (!p.is_string()) return p.dump();
    return named_ports.count(p.get<std::string>()) ? named_ports[p.get<std::string>()] : "?";
  };
  for (const auto& [probe, path] : std::map<std::string, std::string>{
           {"livenessProbe", "/healthz"}, {"readinessProbe", "/readyz"}}) {
    const json get = c.value(probe, json::object()).value("httpGet", json::object());
    check(get.value("path", "") == path, "webhook: " + probe + " is not on " + path);
    check(get.value("scheme", "HTTP") == "HTTPS", "webhook: " + probe + " is not HTTPS");
    check(port_of(get.value("port", json())) == port,
          "webhook: " + probe + " is not on the listen port " + port);
  }
  const json res = c.value("resources", json::object());
  const json requests = res.value("requests", json::object());
  const json limits = res.value("limits", json::object());
  check(requests.contains("cpu") && requests.contains("memory"),
        "webhook: no CPU or memory request");
  check(limits.contains("memory") && QuantityBytes(limits["memory"]) >= kMinMemoryLimitBytes,
        "webhook: memory limit below 64Mi (10,000 cached NADs)");

  // A PodDisruptionBudget keeps one replica through a drain (not with one replica: it
  // would block every drain).
  const json* pdb = Find(objs, "PodDisruptionBudget", e.name);
  check((pdb != nullptr) == (e.replicas >= 2),
        e.replicas >= 2 ? "no PodDisruptionBudget" : "a PodDisruptionBudget for one replica");
  if (pdb != nullptr) {
    check((*pdb)["spec"].value("minAvailable", json()) == 1,
          "PodDisruptionBudget: minAvailable is not 1");
    check(Selects((*pdb)["spec"]["selector"]["matchLabels"], pod_labels),
          "PodDisruptionBudget: the selector does not match the pods");
  }

  // The Service reaches the listen port.
  check(Selects((*service)["spec"]["selector"], pod_labels),
        "Service: the selector does not match the pods");
  const json sports = (*service)["spec"].value("ports", json::array());
  check(sports.size() == 1 && port_of(sports[0].value("targetPort", json())) == port,
        "Service: the port does not lead to the listen port " + port);
  const int service_port = sports.empty() ? 0 : sports[0].value("port", 0);

  // The webhook configuration.
  const json hooks = mwc->value("webhooks", json::array());
  check(hooks.size() == 1, "MutatingWebhookConfiguration: not exactly one webhook");
  if (hooks.empty()) return bad;
  const json& h = hooks[0];
  check(h.value("admissionReviewVersions", json()) == json::array({"v1"}),
        "webhook config: admissionReviewVersions is not [v1]");
  check(h.value("sideEffects", "") == "None", "webhook config: sideEffects is not None");
  check(h.value("failurePolicy", "") == e.failure_policy,
        "webhook config: failurePolicy is not " + e.failure_policy);
  check(
      h.contains("timeoutSeconds") && h.value("timeoutSeconds", 99) <= kMaxTimeoutSeconds,
      "webhook config: timeoutSeconds is not set to at most " + std::to_string(kMaxTimeoutSeconds));
  check(h.value("rules", json()) ==
            json::parse(R"([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                             "resources": ["pods"], "scope": "Namespaced"}])"),
        "webhook config: rules are not CREATE of v1 pods only");
  const json svc = h.value("clientConfig", json::object()).value("service", json::object());
  check(svc.value("name", "") == e.name && svc.value("namespace", "") == e.namespace_ &&
            svc.value("path", "") == "/mutate" && svc.value("port", 443) == service_port,
        "webhook config: clientConfig is not the Service's /mutate");
  std::set<std::string> excluded;
  for (const auto& m :
       h.value("namespaceSelector", json::object()).value("matchExpressions", json::array())) {
    if (m.value("key", "") == "kubernetes.io/metadata.name" && m.value("operator", "") == "NotIn") {
      excluded = StringSet(m.value("values", json::array()));
    }
  }
  std::vector<std::string> must_exclude = kSystemNamespaces;
  must_exclude.push_back(e.namespace_);
  for (const auto& ns : must_exclude) {
    check(excluded.count(ns) == 1, "webhook config: namespaceSelector does not exclude " + ns);
  }
  check(!h.value("namespaceSelector", json::object()).contains("matchLabels"),
        "webhook config: namespaceSelector requires labels");
  // The condition guards against a pod without annotations: a CEL error would count as a
  // webhook failure, and Fail would refuse the pod.
  bool condition = false;
  for (const auto& m : h.value("matchConditions", json::array())) {
    const std::string expr = m.value("expression", "");
    if (expr.find("has(object.metadata.annotations)") != std::string::npos &&
        expr.find("'" + kNetworksAnnotation + "' in object.metadata.annotations") !=
            std::string::npos) {
      condition = true;
    }
  }
  check(condition, "webhook config: no matchCondition on the " + kNetworksAnnotation +
                       " annotation (guarded by has())");

  // The CA the API server trusts the webhook by.
  const json annotations = (*mwc)["metadata"].value("annotations", json::object());
  const bool bundle = !h["clientConfig"].value("caBundle", "").empty();
  if (e.ca == "certManager") {
    check(!bundle, "webhook config: a caBundle beside cert-manager's injection");
    check(annotations.value(kInjectCaFrom, "") == e.namespace_ + "/" + e.name,
          "webhook config: " + kInjectCaFrom + " is not " + e.namespace_ + "/" + e.name);
    const json* cert = Find(objs, "Certificate", e.name);
    check(cert != nullptr, "no Certificate " + e.name);
    if (cert != nullptr) {
      const json cs = (*cert)["spec"];
      check(cs.value("secretName", "") == e.secret, "Certificate: secretName is not " + e.secret);
      check(StringSet(cs.value("dnsNames", json::array()))
                    .count(e.name + "." + e.namespace_ + ".svc") == 1,
            "Certificate: not for " + e.name + "." + e.namespace_ + ".svc");
      check(StringSet(cs.value("usages", json::array())).count("server auth") == 1,
            "Certificate: no server auth usage");
      const json issuer = cs.value("issuerRef", json::object());
      const json* is = Find(objs, issuer.value("kind", "Issuer"), issuer.value("name", ""));
      check(is != nullptr, "Certificate: its issuer is not deployed");
      check(is == nullptr || !(*is)["spec"].contains("selfSigned"),
            "Certificate: self-signed, so each renewal changes the caBundle");
    }
  } else {
    check(!annotations.contains(kInjectCaFrom),
          "webhook config: " + kInjectCaFrom + " without cert-manager");
    check(bundle == (e.ca == "bundle"),
          e.ca == "bundle" ? "webhook config: no caBundle" : "webhook config: a caBundle");
  }
  return bad;
}

}  // namespace hcashare::deploy
