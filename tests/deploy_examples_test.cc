// Tests of deploy/examples: the NetworkAttachmentDefinitions are configs hcashare-cni
// accepts, attached by pods that request a resource the example config defines; the
// doctor pod runs `hcashare doctor`; the NCCL all-reduce job spans two nodes.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cni/netconf.h"
#include "common/temp_dir.h"
#include "tests/deploy_support.h"
#include "tests/test_util.h"

namespace hcashare::deploy {
namespace {

using hcashare::testing::ReadTextFile;

// ---------------------------------------------------------------------------------------
// Examples

// An example file's NAD (with its config parsed) and Pod; null when absent.
struct Example {
  json nad, config, pod;
};

Example LoadExample(const std::string& file) {
  const std::vector<json> objs = LoadYamlFile(Src("deploy/examples/") + file);
  Example e;
  if (const json* nad = Find(objs, "NetworkAttachmentDefinition")) {
    e.nad = *nad;
    e.config = json::parse(e.nad["spec"]["config"].get<std::string>());
  }
  if (const json* pod = Find(objs, "Pod")) e.pod = *pod;
  return e;
}

std::string PodResource(json pod) {
  const json limits = pod["spec"]["containers"][0]["resources"]["limits"];
  return limits.is_object() && limits.size() == 1 ? limits.begin().key() : "";
}

bool HasIpcLock(const json& container) {
  const json add = container.value("securityContext", json::object())
                       .value("capabilities", json::object())
                       .value("add", json::array());
  return std::find(add.begin(), add.end(), "IPC_LOCK") != add.end();
}

TEST(DeployExamples, NetworkAttachmentDefinitions) {
  // The CNI versions hcashare-cni supports.
  const RunResult v =
      RunProcess({Bin("hcashare-cni")}, "{\"cniVersion\":\"1.0.0\"}", {{"CNI_COMMAND", "VERSION"}});
  ASSERT_EQ(v.code, 0) << v.out;
  const json supported = json::parse(v.out)["supportedVersions"];
  // The resources the example config defines.
  const json config = json::parse(ReadTextFile(Src("deploy/examples/config-with-vf-pool.json")));
  const RunResult valid = ValidateConfig(config.dump());
  EXPECT_EQ(valid.code, 0) << valid.out << valid.err;
  std::set<std::string> resources;
  for (const auto& r : config["configList"]) {
    resources.insert(r.value("resourcePrefix", "rdma") + "/" +
                     r["resourceName"].get<std::string>());
  }

  for (const char* file :
       {"nad-sriov-vf-rdma.yaml", "nad-standalone.yaml", "nad-macvlan-shared.yaml"}) {
    SCOPED_TRACE(file);
    Example e = LoadExample(file);
    ASSERT_TRUE(e.nad.is_object() && e.pod.is_object());
    const std::string nad_name = Name(e.nad);
    EXPECT_EQ(e.config.value("name", ""), nad_name);
    EXPECT_NE(std::find(supported.begin(), supported.end(), e.config["cniVersion"]),
              supported.end());
    EXPECT_TRUE(e.config.contains("ipam"));
    // The pod attaches the NAD and requests a resource the config defines.
    EXPECT_EQ(e.pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"], nad_name);
    const std::string resource = PodResource(e.pod);
    EXPECT_TRUE(resources.count(resource)) << resource;
    EXPECT_TRUE(HasIpcLock(e.pod["spec"]["containers"][0]));
    const json annotations = e.nad["metadata"].value("annotations", json::object());
    const std::string annotated = annotations.value("k8s.v1.cni.cncf.io/resourceName", "");
    if (e.config["type"] == "hcashare-cni") {
      // The plugin's own parser accepts it for ADD, without a warning (with the deviceID
      // Multus would add when the NAD has the resourceName annotation).
      json conf = e.config;
      if (!annotated.empty()) conf["deviceID"] = "0000:3b:00.2";
      const auto parsed = cni::ParseNetConf(conf.dump(), cni::Verb::kAdd);
      EXPECT_TRUE(parsed.ok()) << "the parser rejects " << conf.dump();
      if (parsed.ok()) {
        EXPECT_EQ(parsed->warnings, std::vector<std::string>{});
      }
    }
    if (std::string(file) == "nad-sriov-vf-rdma.yaml") {
      EXPECT_EQ(e.config["type"], "hcashare-cni");
      EXPECT_EQ(annotated, resource);  // Multus injects the deviceID of this resource
      EXPECT_FALSE(e.config.contains("resourceName"));
    } else if (std::string(file) == "nad-standalone.yaml") {
      EXPECT_EQ(e.config["type"], "hcashare-cni");
      EXPECT_EQ(annotated, "");  // no injection: the plugin looks the device up
      EXPECT_EQ(e.config.value("resourceName", ""), resource);
    } else {
      EXPECT_EQ(e.config["type"], "hcashare-cni");
      EXPECT_EQ(e.config.value("mode", ""), "macvlan");
      EXPECT_EQ(e.config.value("resourceName", ""), resource);
      EXPECT_EQ(resource, "rdma/hca_shared_devices_a");  // a shared pool
    }
  }
}

TEST(DeployExamples, DoctorPod) {
  Example e = LoadExample("pod-rdma-doctor.yaml");
  ASSERT_TRUE(e.pod.is_object());
  json c = e.pod["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["limits"]["rdma/hca_shared_devices_a"], 1);
  EXPECT_TRUE(HasIpcLock(c));
  EXPECT_EQ(c["command"], json::parse(R"(["/usr/local/bin/hcashare", "doctor"])"));
}

// The doctor pod's command is `hcashare doctor`, and it runs the checks the example says
// (the RDMA devices, their ports, whether memory can be pinned): here on an empty host
// root, where the devices are missing, so it reports a FAIL and exits 1.
TEST(DeployExamples, DoctorSubcommandRuns) {
  Example e = LoadExample("pod-rdma-doctor.yaml");
  ASSERT_TRUE(e.pod.is_object());
  const json command = e.pod["spec"]["containers"][0]["command"];
  ASSERT_TRUE(command.is_array() && !command.empty());
  ASSERT_EQ(command[0], "/usr/local/bin/hcashare");  // this build's bin/hcashare
  std::vector<std::string> argv = {Bin("hcashare")};
  for (size_t i = 1; i < command.size(); ++i) argv.push_back(command[i].get<std::string>());
  TempDir host("deploy-doctor-");
  argv.insert(argv.end(), {"--json", "--host-root", host.path()});
  const RunResult r = RunProcess(argv);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const json report = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.out << r.err;
  EXPECT_EQ(report.value("ok", true), false) << r.out;
  std::map<std::string, std::string> status;
  for (const auto& c : report.value("checks", json::array())) {
    status[c.value("name", "")] = c.value("status", "");
  }
  for (const char* check : {"uverbs", "verbs-ports", "memlock"}) {
    EXPECT_TRUE(status.count(check)) << check << " not checked:\n" << r.out;
  }
  EXPECT_EQ(status["uverbs"], "FAIL") << r.out;  // no device nodes under the empty root
}

TEST(DeployExamples, NcclAllReduceJob) {
  const auto objs = LoadYamlFile(Src("deploy/examples/nccl-allreduce-job.yaml"));
  ASSERT_TRUE(Find(objs, "Job") && Find(objs, "Service") && Find(objs, "ConfigMap"));
  json job = *Find(objs, "Job"), svc = *Find(objs, "Service"), cm = *Find(objs, "ConfigMap");
  json spec = job["spec"];
  EXPECT_EQ(spec["completions"], 2);
  EXPECT_EQ(spec["parallelism"], 2);
  EXPECT_EQ(spec["completionMode"], "Indexed");
  json pod = spec["template"]["spec"];
  const std::string job_name = Name(job);
  EXPECT_EQ(pod["subdomain"], Name(svc));
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["selector"]["job-name"], job_name);
  // Two nodes, or NCCL would not use the network.
  json anti =
      pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(anti["topologyKey"], "kubernetes.io/hostname");
  EXPECT_EQ(anti["labelSelector"]["matchLabels"]["job-name"], job_name);
  json c = pod["containers"][0];
  std::map<std::string, std::string> env;
  for (const auto& e : c["env"]) env[e["name"]] = e.value("value", "");
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(env["NCCL_DEBUG_SUBSYS"], "INIT,NET");
  EXPECT_EQ(c["resources"]["limits"]["rdma/hca_shared_devices_a"], 1);
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], 1);
  EXPECT_TRUE(HasIpcLock(c));
  const std::string script = c["args"][0];
  EXPECT_NE(script.find("--master_addr=" + job_name + "-0." + pod["subdomain"].get<std::string>()),
            std::string::npos);
  // What the snippet sets: tests/deploy_env_test.cc.
  EXPECT_NE(script.find("export NCCL_IB_HCA=\"=$(env | sed"), std::string::npos);
  EXPECT_NE(script.find("/scripts/allreduce.py"), std::string::npos);
  EXPECT_TRUE(cm["data"].contains("allreduce.py"));
}

}  // namespace
}  // namespace hcashare::deploy
