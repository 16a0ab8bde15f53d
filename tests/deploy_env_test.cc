// The environment of a container that holds two hcashare resources (issue 25): the kubelet
// merges the Allocate responses' envs by name and keeps one value when two resources set the
// same name, so each resource's variables must be its own; the NCCL_IB_HCA snippet of the
// README, docs/device-plugin.md and the NCCL example, run by a shell on that environment,
// names both resources' RDMA devices.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/host.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "deviceplugin/allocation.h"
#include "node/discovery.h"
#include "node/pool.h"
#include "testing/sim_node.h"
#include "tests/deploy_support.h"
#include "tests/test_util.h"

namespace hcashare::deploy {
namespace {

// A shared pool on the PF HCA mlx5_0 and an exclusive pool of its VFs (mlx5_2, mlx5_3),
// as in docs/device-plugin.md's "Exclusive mode" next to a shared pool.
constexpr const char* kTwoResources = R"({"configList": [
  {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 10, "selectors": {"ifNames": ["ib0"]}},
  {"resourceName": "vf_pool_a", "mode": "exclusive",
   "selectors": {"isVF": true, "pfNames": ["ens1f0"]}}]})";

// What the kubelet does with the envs of one container's Allocate responses (one per
// resource): the union by name; a name that a later response sets to another value keeps
// its first value and is a conflict ("Environment variable has conflicting setting").
struct MergedEnv {
  std::map<std::string, std::string> env;
  std::vector<std::string> conflicts;
};

MergedEnv MergeLikeKubelet(const std::vector<v1beta1::ContainerAllocateResponse>& responses) {
  MergedEnv out;
  for (const auto& r : responses) {
    for (const auto& [k, v] : r.envs()) {
      auto [it, inserted] = out.env.emplace(k, v);
      if (!inserted && it->second != v) out.conflicts.push_back(k + "=" + it->second + " vs " + v);
    }
  }
  return out;
}

// The items of NCCL_IB_HCA's list (after an optional leading '='), as a set.
std::set<std::string> ListItems(std::string value) {
  if (!value.empty() && value[0] == '=') value.erase(0, 1);
  std::set<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t end = std::min(value.find(',', start), value.size());
    if (end > start) out.insert(value.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The first line of `text` that sets NCCL_IB_HCA from the plugin's variables.
std::string NcclSnippet(const std::string& text) {
  const std::string marker = "export NCCL_IB_HCA=";
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) + 1;  // npos + 1 == 0
  return text.substr(begin, text.find('\n', at) - begin);
}

// NCCL_IB_HCA as `snippet` sets it in a shell whose environment is exactly `env`.
std::string RunSnippet(const std::string& snippet, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {"env", "-i", "PATH=/usr/bin:/bin"};
  for (const auto& [k, v] : env) argv.push_back(k + "=" + v);
  argv.insert(argv.end(), {"sh", "-c", snippet + "\nprintf %s \"$NCCL_IB_HCA\""});
  const RunResult r = RunProcess(argv);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

class ContainerEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(sim_.AddPciFunction(fake::SimNode::IbHca("0000:3b:00.0", "ib0", "mlx5_0")).ok());
    fake::SimPciFunction pf;
    pf.address = "0000:5e:00.0";
    pf.netdevs = {"ens1f0"};
    ASSERT_TRUE(sim_.AddPciFunction(pf).ok());
    for (int i = 0; i < 2; ++i) {
      const std::string n = std::to_string(2 + i);
      ASSERT_TRUE(
          sim_.AddPciFunction(fake::SimNode::RoceVf("0000:5e:00." + n, pf.address,
                                                    "ens1f0v" + std::to_string(i), "mlx5_" + n))
              .ok());
    }
  }

  // The container's env when it holds one ID of each resource: "0" of the shared pool and
  // the first VF of the exclusive one.
  MergedEnv ContainerEnv() {
    config::ParseOutcome cfg = config::ParseConfig(kTwoResources);
    EXPECT_TRUE(cfg.ok()) << config::FormatIssues(cfg);
    if (!cfg.ok()) return {};
    const auto scan = node::Discoverer(*host_).Scan();
    std::vector<v1beta1::ContainerAllocateResponse> responses;
    for (const auto& rc : cfg.config->resources) {
      const node::PoolState pool = node::BuildPool(rc, scan);
      v1beta1::AllocateRequest req;
      req.add_container_requests()->add_devices_ids(
          rc.mode == config::PoolMode::kShared ? "0" : pool.hcas.at(0).address);
      auto resp = dp::BuildAllocateResponse(rc, pool, req, *host_);
      EXPECT_TRUE(resp.ok()) << resp.status().ToString();
      if (resp.ok()) responses.push_back(resp->container_responses(0));
    }
    EXPECT_EQ(responses.size(), 2u);
    return MergeLikeKubelet(responses);
  }

  TempDir tmp_;
  fake::SimNode sim_{tmp_.path()};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path());
};

// No name is set by both resources, and the per-resource variables together name both
// RDMA devices.
TEST_F(ContainerEnvTest, SharedAndExclusiveResourcesDoNotConflict) {
  const MergedEnv merged = ContainerEnv();
  EXPECT_TRUE(merged.conflicts.empty()) << ::testing::PrintToString(merged.conflicts);
  EXPECT_EQ(merged.env.count("HCASHARE_RDMA_DEVICES"), 0u) << "a variable both resources would set";
  std::set<std::string> devices;
  for (const auto& [k, v] : merged.env) {
    if (k.rfind("HCASHARE_RDMA_DEVICES_", 0) == 0) devices.merge(ListItems(v));
  }
  EXPECT_EQ(devices, (std::set<std::string>{"mlx5_0", "mlx5_2"}));
  EXPECT_EQ(merged.env.at("HCASHARE_RDMA_DEVICES_RDMA_HCA_SHARED_DEVICES_A"), "mlx5_0");
  EXPECT_EQ(merged.env.at("HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A"), "mlx5_2");
}

// The snippet of the README and docs/device-plugin.md and the NCCL example's make NCCL use
// both resources' devices, as an exact match.
TEST_F(ContainerEnvTest, NcclIbHcaSnippetsNameEveryResourcesDevices) {
  const MergedEnv merged = ContainerEnv();
  const std::vector<json> job = LoadYamlFile(Src("deploy/examples/nccl-allreduce-job.yaml"));
  ASSERT_NE(Find(job, "Job"), nullptr);
  const std::string job_script =
      (*Find(job, "Job"))["spec"]["template"]["spec"]["containers"][0]["args"][0];
  const std::map<std::string, std::string> sources = {
      {"README.md", NcclSnippet(testing::ReadTextFile(Src("README.md")))},
      {"docs/device-plugin.md", NcclSnippet(testing::ReadTextFile(Src("docs/device-plugin.md")))},
      {"nccl-allreduce-job.yaml", NcclSnippet(job_script)}};
  for (const auto& [file, snippet] : sources) {
    ASSERT_FALSE(snippet.empty()) << file << " sets no NCCL_IB_HCA";
    const std::string value = RunSnippet(snippet, merged.env);
    EXPECT_EQ(value.substr(0, 1), "=") << file << ": " << value << " is not an exact match";
    EXPECT_EQ(ListItems(value), (std::set<std::string>{"mlx5_0", "mlx5_2"}))
        << file << ": " << snippet << " gives " << value;
  }
}

}  // namespace
}  // namespace hcashare::deploy
