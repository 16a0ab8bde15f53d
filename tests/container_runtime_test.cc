// hostfacts/container_runtime.h: which container runtimes give containers CDI devices, by the
// version strings kubelets report (status.nodeInfo.containerRuntimeVersion), and the CDI keys
// of containerd's config.toml as its releases write them.
#include "hostfacts/container_runtime.h"

#include <gtest/gtest.h>

namespace hcashare::hostfacts {
namespace {

TEST(ContainerRuntimeTest, VersionsTheKubeletReports) {
  const struct {
    const char* version;
    CdiSupport want;
  } cases[] = {
      {"containerd://1.6.20", CdiSupport::kNone},  // issue 37's node: Ready, no devices
      {"containerd://1.6.33-0ubuntu1~22.04.1", CdiSupport::kNone},
      {"containerd://v1.6.9", CdiSupport::kNone},
      {"containerd://1.7.0", CdiSupport::kWhenEnabled},
      {"containerd://1.7.24", CdiSupport::kWhenEnabled},
      {"containerd://1.7.22-k3s1", CdiSupport::kWhenEnabled},
      {"containerd://2.0.0", CdiSupport::kDefault},
      {"containerd://v2.1.4", CdiSupport::kDefault},
      {"containerd://10.0.0", CdiSupport::kDefault},
      {"cri-o://1.22.5", CdiSupport::kNone},
      {"cri-o://1.23.0", CdiSupport::kDefault},
      {"cri-o://1.31.3", CdiSupport::kDefault},
      {"docker://24.0.7", CdiSupport::kUnknown},
      {"containerd://", CdiSupport::kUnknown},
      {"containerd://1", CdiSupport::kUnknown},
      {"containerd://x.y", CdiSupport::kUnknown},
      {"containerd://1.x", CdiSupport::kUnknown},
      {"containerd 1.7.24", CdiSupport::kUnknown},
      {"", CdiSupport::kUnknown},
      {"containerd://9999999999.1", CdiSupport::kUnknown},  // no overflow: six digits at most
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.version);
    const RuntimeCdi r = ClassifyContainerRuntime(c.version);
    EXPECT_EQ(CdiSupportName(r.support), std::string(CdiSupportName(c.want)));
    EXPECT_EQ(r.runtime, c.version);
    EXPECT_FALSE(r.why.empty());
  }
  EXPECT_EQ(ClassifyContainerRuntime(std::string(1000, 'x')).runtime.size(), 128u);
}

TEST(ContainerRuntimeTest, ContainerdConfigKeys) {
  // containerd 1.7's documented way to turn CDI on.
  ContainerdCdiConfig c = ParseContainerdConfig(
      "# a comment\nversion = 2\n\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
      "    enable_cdi = true\n    cdi_spec_dirs = [\"/etc/cdi\", \"/var/run/cdi\"]\n"
      "    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n      snapshotter = \"x\"\n");
  EXPECT_EQ(c.version, 2);
  EXPECT_EQ(c.enable_cdi, "true");
  EXPECT_FALSE(c.imports);
  // containerd 2.x's table; single quotes; a trailing comment.
  c = ParseContainerdConfig(
      "version = 3\n[plugins.'io.containerd.cri.v1.runtime']\n  enable_cdi = false  # off\n");
  EXPECT_EQ(c.version, 3);
  EXPECT_EQ(c.enable_cdi, "false");
  // The key outside the CRI plugin's own table, or with a value TOML would not give a bool.
  c = ParseContainerdConfig(
      "version = 2\nenable_cdi = true\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
      "enable_cdi = true\n[plugins.\"io.containerd.grpc.v1.cri\"]\nenable_cdi = \"true\"\n");
  EXPECT_EQ(c.enable_cdi, "");
  // imports (other files) noted; an empty list is none.
  EXPECT_TRUE(ParseContainerdConfig("imports = [\"/etc/containerd/conf.d/*.toml\"]\n").imports);
  EXPECT_FALSE(ParseContainerdConfig("imports = []\n").imports);
  // No version key (containerd 1.x's version 1 format), garbage, nothing.
  EXPECT_EQ(ParseContainerdConfig("[plugins.cri]\n").version, -1);
  EXPECT_EQ(ParseContainerdConfig("version = two\n").version, -1);
  EXPECT_EQ(ParseContainerdConfig("").enable_cdi, "");
  EXPECT_EQ(ParseContainerdConfig("[[[\n]]]\x01=\n").version, -1);
}

}  // namespace
}  // namespace hcashare::hostfacts
