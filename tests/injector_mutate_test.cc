// The injector's decision for one pod (issue 26): counts per attachment, container choice,
// raising but never lowering requests and limits, the exact JSON Patch, the patched pod, and
// a second admission that changes nothing.
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "injector/mutate.h"
#include "injector/resources.h"
#include "tests/injector_test_util.h"

namespace hcashare::injector {
namespace {

using ::hcashare::testing::ExpectMutation;
using ::hcashare::testing::MakePod;
using ::hcashare::testing::MapNadLookup;
using ::hcashare::testing::NetPod;
using nlohmann::json;

json Add(const std::string& path, const json& value) {
  return {{"op", "add"}, {"path", path}, {"value", value}};
}
json Replace(const std::string& path, const json& value) {
  return {{"op", "replace"}, {"path", path}, {"value", value}};
}
bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

MapNadLookup StandardNads() {
  MapNadLookup nads;
  nads.Add("ml", "net-a", "rdma/vfs_a")
      .Add("ml", "net-b", "example.com/hca_b")
      .Add("other", "net-a", "rdma/vfs_a")
      .Add("ml", "plain", "")
      .Add("ml", "to-side", "rdma/vfs_a", "side");
  return nads;
}

TEST(InjectorMutateTest, OneNetworkAddsResourcesToTheFirstContainer) {
  MapNadLookup nads = StandardNads();
  const json pod = NetPod("net-a", {"app", "side"});
  json want = pod;
  want["spec"]["containers"][0]["resources"] = {{"requests", {{"rdma/vfs_a", "1"}}},
                                                {"limits", {{"rdma/vfs_a", "1"}}}};
  MutateResult r = ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources",
                       {{"requests", {{"rdma/vfs_a", "1"}}}, {"limits", {{"rdma/vfs_a", "1"}}}})}),
      want);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(InjectorMutateTest, SameNadTwiceAsksForTwoAndIsLookedUpOnce) {
  MapNadLookup nads = StandardNads();
  const json pod = NetPod("net-a, net-a@rdma1");
  json want = pod;
  const json two = {{"rdma/vfs_a", "2"}};
  want["spec"]["containers"][0]["resources"] = {{"requests", two}, {"limits", two}};
  ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources", {{"requests", two}, {"limits", two}})}),
      want);
  EXPECT_EQ(nads.calls["ml/net-a"], 2);  // once per Mutate: the test runs it twice
}

// The JSON form asks for each attachment's units (`units` of rdma/vfs_a), looking each NAD up
// once: other/net-a and ml/net-b at least.
void ExpectJsonFormMutation(const std::string& annotation, const std::string& units) {
  MapNadLookup nads = StandardNads();
  const json pod = NetPod(annotation);
  const json res = {{"example.com/hca_b", "1"}, {"rdma/vfs_a", units}};
  json want = pod;
  want["spec"]["containers"][0]["resources"] = {{"requests", res}, {"limits", res}};
  ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources", {{"requests", res}, {"limits", res}})}),
      want);
  EXPECT_EQ(nads.calls.count("other/net-a"), 1u);
  EXPECT_EQ(nads.calls.count("ml/net-b"), 1u);
}

TEST(InjectorMutateTest, JsonFormSeveralNetworksAcrossNamespaces) {
  ExpectJsonFormMutation(R"([{"name":"net-a","namespace":"other","interface":"r0"},
                             {"name":"net-b"},{"name":"net-a"},{"name":"plain"}])",
                         "2");
}

// Issue 34: {"Namespace": ...} and {"Name": ...} (Multus matches keys as Go does, case
// aside) named no network here, so the pod got no VF while Multus attached one.
TEST(InjectorMutateTest, CaseInsensitiveKeysInjectWhatMultusAttaches) {
  ExpectJsonFormMutation(R"([{"Name":"net-a","Namespace":"other"},{"NAME":"net-b"}])", "1");
}

TEST(InjectorMutateTest, NothingToAddLeavesThePodAlone) {
  MapNadLookup nads = StandardNads();
  for (const json& pod : {NetPod("plain"), NetPod(""), NetPod("[]"),
                          MakePod(nullptr, json::array({{{"name", "app"}}})),
                          MakePod({{"unrelated", "x"}}, json::array())}) {
    MutateResult r = Mutate(pod, "", nads);
    EXPECT_TRUE(r.allowed) << r.message;
    EXPECT_EQ(r.patch, json::array()) << pod.dump();
    EXPECT_FALSE(r.message.empty());
  }
  EXPECT_EQ(nads.calls.count("ml/net-a"), 0u);
}

struct ExistingCase {
  const char* name;
  json resources;  // the container's resources before
  json patch;      // operations under /spec/containers/0/resources
  json after;      // the container's resources after
};

TEST(InjectorMutateTest, ExistingRequestsAndLimitsAreRaisedNeverLowered) {
  const std::string base = "/spec/containers/0/resources";
  const ExistingCase cases[] = {
      {"larger kept",
       {{"requests", {{"rdma/vfs_a", "3"}}}, {"limits", {{"rdma/vfs_a", "3"}}}},
       json::array(),
       {{"requests", {{"rdma/vfs_a", "3"}}}, {"limits", {{"rdma/vfs_a", "3"}}}}},
      {"equal kept",
       {{"requests", {{"rdma/vfs_a", "2"}}}, {"limits", {{"rdma/vfs_a", "2"}}}},
       json::array(),
       {{"requests", {{"rdma/vfs_a", "2"}}}, {"limits", {{"rdma/vfs_a", "2"}}}}},
      {"canonical suffix",
       {{"requests", {{"rdma/vfs_a", "2k"}}}, {"limits", {{"rdma/vfs_a", "2000"}}}},
       json::array(),
       {{"requests", {{"rdma/vfs_a", "2k"}}}, {"limits", {{"rdma/vfs_a", "2000"}}}}},
      {"smaller raised",
       {{"requests", {{"rdma/vfs_a", "1"}}}, {"limits", {{"rdma/vfs_a", "1"}}}},
       json::array({Replace(base + "/requests/rdma~1vfs_a", "2"),
                    Replace(base + "/limits/rdma~1vfs_a", "2")}),
       {{"requests", {{"rdma/vfs_a", "2"}}}, {"limits", {{"rdma/vfs_a", "2"}}}}},
      {"requests only",
       {{"requests", {{"rdma/vfs_a", "1"}, {"cpu", "500m"}}}},
       json::array({Replace(base + "/requests/rdma~1vfs_a", "2"),
                    Add(base + "/limits", {{"rdma/vfs_a", "2"}})}),
       {{"requests", {{"rdma/vfs_a", "2"}, {"cpu", "500m"}}}, {"limits", {{"rdma/vfs_a", "2"}}}}},
      {"limits only, larger",
       {{"limits", {{"rdma/vfs_a", "5"}}}},
       json::array({Add(base + "/requests", {{"rdma/vfs_a", "5"}})}),
       {{"requests", {{"rdma/vfs_a", "5"}}}, {"limits", {{"rdma/vfs_a", "5"}}}}},
      {"limit above request",
       {{"requests", {{"rdma/vfs_a", "1"}}}, {"limits", {{"rdma/vfs_a", "4"}}}},
       json::array({Replace(base + "/requests/rdma~1vfs_a", "4")}),
       {{"requests", {{"rdma/vfs_a", "4"}}}, {"limits", {{"rdma/vfs_a", "4"}}}}},
      {"request above limit",
       {{"requests", {{"rdma/vfs_a", "6"}}}, {"limits", {{"rdma/vfs_a", "1"}}}},
       json::array({Replace(base + "/limits/rdma~1vfs_a", "6")}),
       {{"requests", {{"rdma/vfs_a", "6"}}}, {"limits", {{"rdma/vfs_a", "6"}}}}},
      {"other resources only",
       {{"requests", {{"cpu", "1"}}}, {"limits", {{"memory", "1Gi"}}}},
       json::array(
           {Add(base + "/requests/rdma~1vfs_a", "2"), Add(base + "/limits/rdma~1vfs_a", "2")}),
       {{"requests", {{"cpu", "1"}, {"rdma/vfs_a", "2"}}},
        {"limits", {{"memory", "1Gi"}, {"rdma/vfs_a", "2"}}}}},
      {"empty resources",
       json::object(),
       json::array({Add(base + "/requests", {{"rdma/vfs_a", "2"}}),
                    Add(base + "/limits", {{"rdma/vfs_a", "2"}})}),
       {{"requests", {{"rdma/vfs_a", "2"}}}, {"limits", {{"rdma/vfs_a", "2"}}}}},
      {"null maps",
       {{"requests", nullptr}, {"limits", nullptr}},
       json::array({Add(base + "/requests", {{"rdma/vfs_a", "2"}}),
                    Add(base + "/limits", {{"rdma/vfs_a", "2"}})}),
       {{"requests", {{"rdma/vfs_a", "2"}}}, {"limits", {{"rdma/vfs_a", "2"}}}}},
      {"zero raised",
       {{"requests", {{"rdma/vfs_a", "0"}}}, {"limits", {{"rdma/vfs_a", 0}}}},
       json::array({Replace(base + "/requests/rdma~1vfs_a", "2"),
                    Replace(base + "/limits/rdma~1vfs_a", "2")}),
       {{"requests", {{"rdma/vfs_a", "2"}}}, {"limits", {{"rdma/vfs_a", "2"}}}}},
  };
  for (const ExistingCase& c : cases) {
    SCOPED_TRACE(c.name);
    MapNadLookup nads = StandardNads();
    json pod = NetPod("net-a,net-a");
    pod["spec"]["containers"][0]["resources"] = c.resources;
    json want = pod;
    want["spec"]["containers"][0]["resources"] = c.after;
    ExpectMutation(pod, nads, c.patch, want);
  }
}

TEST(InjectorMutateTest, RefusesFractionalOrUnreadableExistingQuantities) {
  for (const json& bad : {json("1.5"), json("500m"), json("two"), json("-1"), json(true),
                          json("99999999999999999999")}) {
    MapNadLookup nads = StandardNads();
    json pod = NetPod("net-a");
    pod["spec"]["containers"][0]["resources"] = {{"limits", {{"rdma/vfs_a", bad}}}};
    MutateResult r = Mutate(pod, "", nads);
    EXPECT_FALSE(r.allowed) << bad.dump();
    EXPECT_EQ(r.patch, json::array());
    EXPECT_TRUE(Contains(r.message, "container \"app\" resources.limits[\"rdma/vfs_a\"]"))
        << r.message;
    EXPECT_TRUE(Contains(r.message, "write a whole number")) << r.message;
  }
}

TEST(InjectorMutateTest, RefusesNadResourceNamesKubernetesWouldRefuse) {
  for (const char* bad : {"cpu", "memory", "rdma", "kubernetes.io/vf", "x.kubernetes.io/vf",
                          "requests.example.com/vf", "example.com/", "/vf", "Example.com/vf",
                          "example.com/a/b", "example.com/-vf"}) {
    MapNadLookup nads;
    nads.Add("ml", "bad", bad);
    MutateResult r = Mutate(NetPod("bad"), "", nads);
    EXPECT_FALSE(r.allowed) << bad;
    EXPECT_EQ(r.denial_code, 400);
    EXPECT_TRUE(Contains(r.message, "network ml/bad")) << r.message;
    EXPECT_TRUE(Contains(r.message, "fix the NAD")) << r.message;
  }
}

TEST(InjectorMutateTest, MissingNadRefusesOrWarns) {
  MapNadLookup nads = StandardNads();
  const json pod = NetPod("net-a, gone, other/also-gone, gone");
  MutateResult refused = Mutate(pod, "", nads);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.denial_code, 400);
  EXPECT_TRUE(Contains(refused.message, "NetworkAttachmentDefinition ml/gone does not exist"))
      << refused.message;
  EXPECT_TRUE(Contains(refused.message, "create it or fix")) << refused.message;
  EXPECT_EQ(nads.calls["ml/gone"], 1);
  // Issue 34: each miss is a GET; the refusal is known at the first, so no more are asked.
  EXPECT_EQ(nads.calls.count("other/also-gone"), 0u);

  // Tolerated: net-a, which exists, still gets its resource; the missing ones none.
  json want_pod = pod;
  want_pod["spec"]["containers"][0]["resources"] = {{"limits", {{"rdma/vfs_a", "1"}}},
                                                    {"requests", {{"rdma/vfs_a", "1"}}}};
  MutateResult warned =
      ExpectMutation(pod, nads,
                     json::array({{{"op", "add"},
                                   {"path", "/spec/containers/0/resources"},
                                   {"value", want_pod["spec"]["containers"][0]["resources"]}}}),
                     want_pod, {/*refuse_missing=*/false});
  ASSERT_EQ(warned.warnings.size(), 1u);
  EXPECT_TRUE(Contains(warned.warnings[0], "ml/gone, other/also-gone do not exist"))
      << warned.warnings[0];
  EXPECT_TRUE(Contains(warned.warnings[0], "gets no resource for them")) << warned.warnings[0];
}

// Issue 34: a review had no deadline: a pod naming many absent NADs held a worker for a GET
// each. Past the deadline nothing more is looked up and the pod is refused with 503 (the API
// server then answers the user; the webhook call never times out); lookups are told the
// deadline.
TEST(InjectorMutateTest, TheReviewsDeadlineStopsTheLookups) {
  MapNadLookup nads = StandardNads();
  const json pod = NetPod("net-a, net-b");
  MutateOptions late;
  late.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  MutateResult r = Mutate(pod, "", nads, late);
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.denial_code, 503);
  EXPECT_TRUE(Contains(r.message, "ran out of time")) << r.message;
  EXPECT_TRUE(Contains(r.message, "try again")) << r.message;
  EXPECT_TRUE(nads.calls.empty());
  // With time left, each lookup is handed the deadline.
  struct DeadlineSeen : MapNadLookup {
    std::vector<std::chrono::steady_clock::time_point> seen;
    Result<NadInfo> FindBy(const std::string& ns, const std::string& name,
                           std::chrono::steady_clock::time_point deadline) override {
      seen.push_back(deadline);
      return Find(ns, name);
    }
  } timed;
  timed.Add("ml", "net-a", "rdma/vfs_a").Add("ml", "net-b", "example.com/hca_b");
  MutateOptions soon;
  soon.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  EXPECT_TRUE(Mutate(pod, "", timed, soon).allowed);
  ASSERT_EQ(timed.seen.size(), 2u);
  EXPECT_EQ(timed.seen[0], soon.deadline);
}

TEST(InjectorMutateTest, LookupFailureRefusesEvenWhenMissingIsTolerated) {
  MapNadLookup nads = StandardNads();
  nads.Fail("ml", "net-b", Status::Unavailable("API server timed out"));
  for (bool refuse_missing : {true, false}) {
    MutateResult r = Mutate(NetPod("net-a,net-b"), "", nads, {refuse_missing});
    EXPECT_FALSE(r.allowed);
    EXPECT_EQ(r.denial_code, 503);
    EXPECT_TRUE(Contains(r.message, "could not read NetworkAttachmentDefinition ml/net-b"))
        << r.message;
    EXPECT_TRUE(Contains(r.message, "API server timed out")) << r.message;
  }
}

TEST(InjectorMutateTest, MalformedAnnotationRefusesOrWarns) {
  MapNadLookup nads = StandardNads();
  for (const char* bad : {"net-a,,net-b", "[{\"name\":", "Net-A"}) {
    MutateResult refused = Mutate(NetPod(bad), "", nads);
    EXPECT_FALSE(refused.allowed) << bad;
    EXPECT_TRUE(Contains(refused.message, "k8s.v1.cni.cncf.io/networks")) << refused.message;
    MutateResult warned = Mutate(NetPod(bad), "", nads, {/*refuse_missing=*/false});
    EXPECT_TRUE(warned.allowed) << bad;
    EXPECT_EQ(warned.patch, json::array());
    ASSERT_EQ(warned.warnings.size(), 1u);
    EXPECT_TRUE(Contains(warned.warnings[0], "k8s.v1.cni.cncf.io/networks"));
  }
  json not_string = NetPod("x");
  not_string["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] = json::array();
  MutateResult r = Mutate(not_string, "", nads);
  EXPECT_FALSE(r.allowed);
  EXPECT_TRUE(Contains(r.message, "annotation values are strings")) << r.message;
  // A mebibyte annotation is refused by its size, with the bound in the message.
  MutateResult huge = Mutate(NetPod(std::string(size_t{1} << 20, 'a')), "", nads);
  EXPECT_FALSE(huge.allowed);
  EXPECT_TRUE(Contains(huge.message, "at most 262144")) << huge.message.substr(0, 200);
}

TEST(InjectorMutateTest, ContainerChosenByPodOrNadAnnotation) {
  const std::string res1 = "/resources";
  const json one = {{"rdma/vfs_a", "1"}};
  {
    SCOPED_TRACE("NAD annotation");
    MapNadLookup nads = StandardNads();
    const json pod = NetPod("to-side, net-b", {"app", "side"});
    json want = pod;
    const json b = {{"example.com/hca_b", "1"}};
    want["spec"]["containers"][0]["resources"] = {{"requests", b}, {"limits", b}};
    want["spec"]["containers"][1]["resources"] = {{"requests", one}, {"limits", one}};
    ExpectMutation(
        pod, nads,
        json::array({Add("/spec/containers/0/resources", {{"requests", b}, {"limits", b}}),
                     Add("/spec/containers/1/resources", {{"requests", one}, {"limits", one}})}),
        want);
  }
  {
    SCOPED_TRACE("pod annotation wins over the NAD's");
    MapNadLookup nads = StandardNads();
    json pod = NetPod("to-side, net-a", {"app", "side", "third"});
    pod["metadata"]["annotations"]["hcashare.io/resource-container"] = "third";
    json want = pod;
    const json two = {{"rdma/vfs_a", "2"}};
    want["spec"]["containers"][2]["resources"] = {{"requests", two}, {"limits", two}};
    ExpectMutation(
        pod, nads,
        json::array({Add("/spec/containers/2/resources", {{"requests", two}, {"limits", two}})}),
        want);
  }
}

TEST(InjectorMutateTest, UnknownOrInitContainerNamesAreRefused) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a", {"app", "side"});
  pod["spec"]["initContainers"] = json::array({{{"name", "setup"}}});
  for (const char* name : {"nope", "setup", ""}) {
    json p = pod;
    p["metadata"]["annotations"]["hcashare.io/resource-container"] = name;
    MutateResult r = Mutate(p, "", nads);
    EXPECT_FALSE(r.allowed) << name;
    EXPECT_TRUE(Contains(r.message, "hcashare.io/resource-container")) << r.message;
  }
  json p = pod;
  p["metadata"]["annotations"]["hcashare.io/resource-container"] = "nope";
  EXPECT_TRUE(Contains(Mutate(p, "", nads).message,
                       "names container \"nope\", which the pod does not have: name one of "
                       "spec.containers (\"app\", \"side\")"));
  p["metadata"]["annotations"]["hcashare.io/resource-container"] = "setup";
  EXPECT_TRUE(Contains(Mutate(p, "", nads).message, "names init container \"setup\""));
  // The NAD's name is refused the same way, naming the network.
  nads.Add("ml", "to-missing", "rdma/vfs_a", "sidecar");
  MutateResult r = Mutate(NetPod("to-missing"), "", nads);
  EXPECT_FALSE(r.allowed);
  EXPECT_TRUE(Contains(r.message, "network ml/to-missing's NetworkAttachmentDefinition"))
      << r.message;
}

TEST(InjectorMutateTest, InitContainersAreNeverChosenImplicitly) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a");
  pod["spec"]["initContainers"] = json::array({{{"name", "setup"}}});
  json want = pod;
  const json one = {{"rdma/vfs_a", "1"}};
  want["spec"]["containers"][0]["resources"] = {{"requests", one}, {"limits", one}};
  ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources", {{"requests", one}, {"limits", one}})}),
      want);
}

TEST(InjectorMutateTest, PodWithoutContainers) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a", {});
  MutateResult r = Mutate(pod, "", nads);
  EXPECT_FALSE(r.allowed);
  EXPECT_TRUE(Contains(r.message,
                       "network ml/net-a needs resource \"rdma/vfs_a\" but the pod has no "
                       "containers"))
      << r.message;
  pod["spec"].erase("containers");
  EXPECT_FALSE(Mutate(pod, "", nads).allowed);
  EXPECT_TRUE(Mutate(NetPod("plain", {}), "", nads).allowed);  // nothing to place
}

TEST(InjectorMutateTest, NamespaceFromTheHintWhenThePodHasNone) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a");
  pod["metadata"].erase("namespace");
  MutateResult r = Mutate(pod, "other", nads);
  EXPECT_TRUE(r.allowed) << r.message;
  EXPECT_EQ(nads.calls.count("other/net-a"), 1u);
  EXPECT_EQ(nads.calls.count("ml/net-a"), 0u);
  MutateResult none = Mutate(pod, "", nads);
  EXPECT_FALSE(none.allowed);
  EXPECT_TRUE(Contains(none.message, "write it as namespace/name")) << none.message;
}

// A resource the pod already asks for, in any app container, stays where it is when nothing
// names a container; a container named by annotation gets it, with a warning that another
// asks for it too.
TEST(InjectorMutateTest, AResourceThePodAlreadyAsksForStaysWhereItIs) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a", {"app", "side"});
  pod["spec"]["containers"][1]["resources"] = {{"limits", {{"rdma/vfs_a", "1"}}}};
  json want = pod;
  want["spec"]["containers"][1]["resources"]["requests"] = {{"rdma/vfs_a", "1"}};
  MutateResult r = ExpectMutation(
      pod, nads, json::array({Add("/spec/containers/1/resources/requests", {{"rdma/vfs_a", "1"}})}),
      want);
  EXPECT_TRUE(r.warnings.empty());

  pod["metadata"]["annotations"]["hcashare.io/resource-container"] = "app";
  want = pod;
  const json one = {{"rdma/vfs_a", "1"}};
  want["spec"]["containers"][0]["resources"] = {{"requests", one}, {"limits", one}};
  r = ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources", {{"requests", one}, {"limits", one}})}),
      want);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_TRUE(Contains(r.warnings[0], "\"side\" also asks for it")) << r.warnings[0];
}

// Issue 34: with reinvocationPolicy IfNeeded, a sidecar injector that puts its proxy first
// (Istio's holdApplicationUntilProxyStarts) made the second invocation add a second unit to
// the proxy. The units stay where the first invocation put them: nothing is asked twice.
TEST(InjectorMutateTest, AReorderedReinvocationAsksForNothingTwice) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a, net-b, net-a", {"app"});
  MutateResult first = Mutate(pod, "", nads);
  ASSERT_TRUE(first.allowed) << first.message;
  ASSERT_FALSE(first.patch.empty());
  json mutated = pod.patch(first.patch);
  // The sidecar webhook runs next and puts its proxy first, then hcashare runs again.
  mutated["spec"]["containers"].insert(mutated["spec"]["containers"].begin(),
                                       json{{"name", "istio-proxy"}, {"image", "proxy"}});
  MutateResult again = Mutate(mutated, "", nads);
  ASSERT_TRUE(again.allowed) << again.message;
  EXPECT_TRUE(again.patch.empty()) << again.patch.dump();
  EXPECT_FALSE(mutated["spec"]["containers"][0].contains("resources"));
}

TEST(InjectorMutateTest, RefusesShapesItCannotPatch) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a");
  pod["spec"]["containers"][0]["resources"] = "lots";
  EXPECT_TRUE(Contains(Mutate(pod, "", nads).message, "container \"app\".resources is string"));
  pod["spec"]["containers"][0]["resources"] = {{"limits", json::array()}};
  EXPECT_TRUE(Contains(Mutate(pod, "", nads).message, ".resources.limits is array"));
  pod["spec"]["containers"] = json::object();
  EXPECT_TRUE(Contains(Mutate(pod, "", nads).message, "spec.containers is object"));
  EXPECT_FALSE(Mutate(json::array(), "", nads).allowed);
}

TEST(InjectorMutateTest, EscapesJsonPointerTokens) {
  EXPECT_EQ(EscapeJsonPointer("rdma/vfs_a"), "rdma~1vfs_a");
  EXPECT_EQ(EscapeJsonPointer("a~b/c~/"), "a~0b~1c~0~1");
  EXPECT_EQ(EscapeJsonPointer("~1"), "~01");
  EXPECT_EQ(EscapeJsonPointer(""), "");
}

TEST(InjectorMutateTest, NadInfoFromObjectReadsTheAnnotations) {
  const json nad = {{"metadata",
                     {{"name", "n"},
                      {"annotations",
                       {{"k8s.v1.cni.cncf.io/resourceName", "rdma/vfs_a"},
                        {"hcashare.io/resource-container", "side"},
                        {"hcashare.io/resource-api", "dra"}}}}}};
  NadInfo info = NadInfoFromObject(nad);
  EXPECT_EQ(info.resource_name, "rdma/vfs_a");
  EXPECT_EQ(info.container.value_or("?"), "side");
  EXPECT_EQ(info.resource_api.value_or("?"), "dra");
  NadInfo none = NadInfoFromObject({{"metadata", {{"name", "n"}}}});
  EXPECT_EQ(none.resource_name, "");
  EXPECT_FALSE(none.container.has_value());
  EXPECT_FALSE(none.resource_api.has_value());
}

// A NAD whose resource is allocated through DRA (hcashare.io/resource-api: dra) asks for no
// extended resource: Multus's DRA path finds the claim's device by the NAD's resourceName, and
// a request of the same name would leave the pod unschedulable (no device plugin advertises
// it) or, with a DeviceClass extendedResourceName, allocate a second device.
TEST(InjectorMutateTest, DraNadsAskForNoExtendedResource) {
  MapNadLookup nads = StandardNads();
  nads.Set("ml", "vf-dra", NadInfo{"rdma/hca_vfs", std::nullopt, "dra"})
      .Set("ml", "vf-dp", NadInfo{"rdma/vfs_a", std::nullopt, "devicePlugin"});
  json with_claim = NetPod("vf-dra, vf-dp, vf-dra");
  with_claim["spec"]["resourceClaims"] =
      json::array({{{"name", "rdma"}, {"resourceClaimTemplateName", "vf"}}});
  json want = with_claim;
  want["spec"]["containers"][0]["resources"] = {{"requests", {{"rdma/vfs_a", "1"}}},
                                                {"limits", {{"rdma/vfs_a", "1"}}}};
  const MutateResult r = ExpectMutation(
      with_claim, nads,
      json::array({Add("/spec/containers/0/resources",
                       {{"requests", {{"rdma/vfs_a", "1"}}}, {"limits", {{"rdma/vfs_a", "1"}}}})}),
      want);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];

  // Only DRA networks: nothing to add, and the message says why.
  json only = NetPod("vf-dra");
  only["spec"]["resourceClaims"] = with_claim["spec"]["resourceClaims"];
  const MutateResult o = Mutate(only, "", nads);
  EXPECT_TRUE(o.allowed);
  EXPECT_EQ(o.patch, json::array());
  EXPECT_TRUE(Contains(o.message, "DRA")) << o.message;
  EXPECT_TRUE(o.warnings.empty());

  // Without any claim the attachment will find no device: admitted, with a warning naming
  // the network, its resource and what to add (once, however often the NAD is named).
  const MutateResult w = Mutate(NetPod("vf-dra, vf-dra"), "", nads);
  EXPECT_TRUE(w.allowed);
  EXPECT_EQ(w.patch, json::array());
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_TRUE(Contains(w.warnings[0], "ml/vf-dra")) << w.warnings[0];
  EXPECT_TRUE(Contains(w.warnings[0], "rdma/hca_vfs")) << w.warnings[0];
  EXPECT_TRUE(Contains(w.warnings[0], "spec.resourceClaims")) << w.warnings[0];
}

TEST(InjectorMutateTest, UnknownResourceApiIsRefusedNamingTheNetwork) {
  MapNadLookup nads;
  nads.Set("ml", "typo", NadInfo{"rdma/hca_vfs", std::nullopt, "DRA "});
  const MutateResult r = Mutate(NetPod("typo"), "", nads);
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.denial_code, 400);
  EXPECT_TRUE(Contains(r.message, "ml/typo")) << r.message;
  EXPECT_TRUE(Contains(r.message, "hcashare.io/resource-api")) << r.message;
  EXPECT_TRUE(Contains(r.message, "\"dra\"")) << r.message;
  // Without a resource the annotation changes nothing, so it is not checked.
  nads.Set("ml", "plain-typo", NadInfo{"", std::nullopt, "x"});
  EXPECT_TRUE(Mutate(NetPod("plain-typo"), "", nads).allowed);
}

const json kMount = {{"name", "podnetinfo"}, {"mountPath", "/etc/podnetinfo"}, {"readOnly", true}};
const json kVolume = {
    {"name", "podnetinfo"},
    {"downwardAPI",
     {{"items",
       json::array(
           {{{"path", "network-status"},
             {"fieldRef",
              {{"apiVersion", "v1"},
               {"fieldPath", "metadata.annotations['k8s.v1.cni.cncf.io/network-status']"}}}}})}}}};
const MutateOptions kWithVolume{/*refuse_missing=*/true, /*downward_api_volume=*/true};

TEST(InjectorMutateTest, DownwardApiVolumeWhereNoneExists) {
  MapNadLookup nads = StandardNads();
  const json pod = NetPod("net-a", {"app", "side"});
  json want = pod;
  const json one = {{"rdma/vfs_a", "1"}};
  want["spec"]["containers"][0]["resources"] = {{"requests", one}, {"limits", one}};
  want["spec"]["containers"][0]["volumeMounts"] = json::array({kMount});
  want["spec"]["volumes"] = json::array({kVolume});
  ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources", {{"requests", one}, {"limits", one}}),
                   Add("/spec/containers/0/volumeMounts", json::array({kMount})),
                   Add("/spec/volumes", json::array({kVolume}))}),
      want, kWithVolume);
}

TEST(InjectorMutateTest, DownwardApiVolumeAppendsToExistingListsInEveryChosenContainer) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a, to-side", {"app", "side", "idle"});
  const json token = {{"name", "token"}, {"mountPath", "/var/run/secrets/t"}};
  for (json& c : pod["spec"]["containers"]) c["volumeMounts"] = json::array({token});
  pod["spec"]["volumes"] = json::array({{{"name", "token"}, {"emptyDir", json::object()}}});
  json want = pod;
  const json one = {{"rdma/vfs_a", "1"}};
  for (int i : {0, 1}) {
    want["spec"]["containers"][i]["resources"] = {{"requests", one}, {"limits", one}};
    want["spec"]["containers"][i]["volumeMounts"].push_back(kMount);
  }
  want["spec"]["volumes"].push_back(kVolume);
  ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources", {{"requests", one}, {"limits", one}}),
                   Add("/spec/containers/1/resources", {{"requests", one}, {"limits", one}}),
                   Add("/spec/containers/0/volumeMounts/-", kMount),
                   Add("/spec/containers/1/volumeMounts/-", kMount),
                   Add("/spec/volumes/-", kVolume)}),
      want, kWithVolume);
}

TEST(InjectorMutateTest, DownwardApiVolumeOnlyWhenAResourceIsNeeded) {
  MapNadLookup nads = StandardNads();
  MutateResult r = Mutate(NetPod("plain"), "", nads, kWithVolume);
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.patch, json::array());
  // A pod that already has its resources still gets the volume (once).
  json pod = NetPod("net-a");
  const json one = {{"rdma/vfs_a", "1"}};
  pod["spec"]["containers"][0]["resources"] = {{"requests", one}, {"limits", one}};
  json want = pod;
  want["spec"]["containers"][0]["volumeMounts"] = json::array({kMount});
  want["spec"]["volumes"] = json::array({kVolume});
  ExpectMutation(pod, nads,
                 json::array({Add("/spec/containers/0/volumeMounts", json::array({kMount})),
                              Add("/spec/volumes", json::array({kVolume}))}),
                 want, kWithVolume);
}

TEST(InjectorMutateTest, DownwardApiVolumeRespectsWhatThePodHas) {
  MapNadLookup nads = StandardNads();
  json pod = NetPod("net-a");
  const json mine = {{"name", "podnetinfo"}, {"emptyDir", json::object()}};
  pod["spec"]["volumes"] = json::array({mine});
  pod["spec"]["containers"][0]["volumeMounts"] =
      json::array({{{"name", "other"}, {"mountPath", "/etc/podnetinfo"}}});
  json want = pod;
  const json one = {{"rdma/vfs_a", "1"}};
  want["spec"]["containers"][0]["resources"] = {{"requests", one}, {"limits", one}};
  MutateResult r = ExpectMutation(
      pod, nads,
      json::array({Add("/spec/containers/0/resources", {{"requests", one}, {"limits", one}})}),
      want, kWithVolume);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_TRUE(Contains(r.warnings[0], "/etc/podnetinfo is taken in \"app\"")) << r.warnings[0];
}

TEST(InjectorResourcesTest, WholeQuantities) {
  const std::pair<json, int64_t> good[] = {{"0", 0},
                                           {"2", 2},
                                           {"+3", 3},
                                           {"2k", 2000},
                                           {"1M", 1000000},
                                           {"1Ki", 1024},
                                           {"1.5Ki", 1536},
                                           {"2e3", 2000},
                                           {"2E3", 2000},
                                           {"1.5k", 1500},
                                           {"2000m", 2},
                                           {"3000000u", 3},
                                           {"0.5e1", 5},
                                           {"007", 7},
                                           {"20e-1", 2},
                                           {"1Ei", int64_t{1} << 60},
                                           {"9223372036854775807", INT64_MAX},
                                           {json(4), 4},
                                           {json(2.0), 2},
                                           {"-0", 0}};
  for (const auto& [value, want] : good) {
    Result<int64_t> n = ParseWholeQuantity(value);
    ASSERT_TRUE(n.ok()) << value.dump() << ": " << n.status().ToString();
    EXPECT_EQ(*n, want) << value.dump();
  }
  const std::pair<json, const char*> bad[] = {{"1.5", "not a whole number"},
                                              {"500m", "not a whole number"},
                                              {"1n", "not a whole number"},
                                              {"-1", "negative"},
                                              {"", "not a number"},
                                              {"k", "not a number"},
                                              {"2x", "unknown suffix"},
                                              {"2 ", "unknown suffix"},
                                              {"2e", "unknown suffix"},
                                              {"2e+", "bad exponent"},
                                              {"2e99", "out of range"},
                                              {"8Ei", "larger than"},
                                              {"9223372036854775808", "larger than"},
                                              {"1234567890123456789012", "too many digits"},
                                              {json(nullptr), "not a string"},
                                              {json::array(), "not a string"},
                                              {json(-3), "negative"}};
  for (const auto& [value, why] : bad) {
    Result<int64_t> n = ParseWholeQuantity(value);
    ASSERT_FALSE(n.ok()) << value.dump() << " read as " << *n;
    EXPECT_TRUE(Contains(n.status().message(), why))
        << value.dump() << ": " << n.status().message();
  }
}

TEST(InjectorResourcesTest, ExtendedResourceNames) {
  for (const char* ok : {"rdma/vfs_a", "example.com/hca.b-1", "a.b.c/X_Y", "nvidia.com/gpu"}) {
    EXPECT_TRUE(CheckExtendedResourceName(ok).ok()) << ok;
  }
  const std::pair<std::string, const char*> bad[] = {
      {"cpu", "has no domain"},
      {"kubernetes.io/vf", "kubernetes.io domain"},
      {"requests.example.com/vf", "\"requests.\""},
      {"Example.com/vf", "DNS-1123 subdomain"},
      {std::string(245, 'a') + "/vf", "at most 244"},
      {"example.com/" + std::string(64, 'a'), "1 to 63"},
      {"example.com/a/b", "no further '/'"},
      {"example.com/_a", "starting and ending"}};
  for (const auto& [name, why] : bad) {
    Status st = CheckExtendedResourceName(name);
    EXPECT_FALSE(st.ok()) << name;
    EXPECT_TRUE(Contains(st.message(), why)) << st.message();
  }
  EXPECT_TRUE(CheckExtendedResourceName(std::string(244, 'a') + "/vf").ok());
}

}  // namespace
}  // namespace hcashare::injector
