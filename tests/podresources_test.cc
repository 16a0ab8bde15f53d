// Tests for the CNI's pod device lookup (kubelet/podresources.h, kubelet/device_checkpoint.h): the
// pod-resources fallback chain v1 Get -> v1 List -> v1alpha1 List over real gRPC on a unix
// socket (tools/fake_podresources.h plays the kubelet), RESOURCE_EXHAUSTED retries,
// deadlines, the 16 MiB receive limit, de-duplication of the kubelet's per-NUMA entries,
// and the checkpoint-file fallback in both DeviceIDs formats.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/log.h"
#include "common/temp_dir.h"
#include "common/unique_fd.h"
#include "kubelet/device_checkpoint.h"
#include "kubelet/podresources.h"
#include "testing/fake_podresources.h"
#include "tests/run_in_child.h"

namespace hcashare::kubelet {
namespace {

using fake::FakeContainer;
using fake::FakeDevices;
using fake::FakePodResources;
using ::testing::HasSubstr;
using Method = FakePodResources::Method;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
using Ids = std::vector<std::string>;

constexpr char kResA[] = "rdma/hca_shared_devices_a";
constexpr char kResVf[] = "intel.com/sriov_rdma";

// True when `haystack` contains `needle`; prints both otherwise.
::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << haystack << "\" does not contain \"" << needle << "\"";
}

std::string Str(const Result<PodDevices>& r) {
  return r.ok() ? "source " + r->source : r.status().ToString();
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

class PodResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    opts_.kubelet_root = tmp_.path();
    opts_.device_plugin_dir = tmp_.path() + "/device-plugins";
    opts_.timeout = milliseconds(5000);
    opts_.backoff_initial = milliseconds(1);
  }

  // Starts the fake kubelet on <root>/pod-resources/kubelet.sock with two pods in "ml":
  // "other" (one VF) and "trainer" (two containers, shared HCA devices on NUMA 0 and 1).
  void StartFake() {
    fake_ = std::make_unique<FakePodResources>(PodResourcesSocketPath(tmp_.path()));
    fake_->AddPod("ml", "other", "uid-other", {{"c", {{kResVf, {"0000:3b:00.2"}, {0}}}}});
    fake_->AddPod("ml", "trainer", "uid-trainer",
                  {{"main", {{kResA, {"mlx5_0", "mlx5_1"}, {0, 1}}}},
                   {"sidecar", {{kResA, {"mlx5_1"}, {1}}, {kResVf, {"0000:3b:00.4"}, {}}}}});
    ASSERT_TRUE(fake_->Start().ok());
  }

  Result<PodDevices> Lookup(const std::string& name = "trainer", const std::string& ns = "ml",
                            const std::string& uid = "uid-trainer") {
    return LookupPodDevices(opts_, PodRef{ns, name, uid});
  }

  // The trainer pod's expected devices.
  static DevicesByResource Trainer() {
    return {{kResA, {"mlx5_0", "mlx5_1"}}, {kResVf, {"0000:3b:00.4"}}};
  }

  void ExpectCalls(int get, int list, int alpha) {
    EXPECT_EQ(fake_->Calls(Method::kV1Get), get);
    EXPECT_EQ(fake_->Calls(Method::kV1List), list);
    EXPECT_EQ(fake_->Calls(Method::kV1alpha1List), alpha);
  }

  TempDir tmp_;
  PodResourcesOptions opts_;
  std::unique_ptr<FakePodResources> fake_;
};

// ---------------------------------------------------------------------------------------
// The gRPC chain

TEST_F(PodResourcesTest, GetAnswersWhenServed) {
  StartFake();
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 Get");
  EXPECT_EQ(r->by_resource, Trainer());
  ExpectCalls(1, 0, 0);
}

TEST_F(PodResourcesTest, OtherPodGetsOnlyItsOwnDevices) {
  StartFake();
  auto r = Lookup("other", "ml", "uid-other");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->by_resource, (DevicesByResource{{kResVf, {"0000:3b:00.2"}}}));
}

TEST_F(PodResourcesTest, GetDisabledFallsBackToList) {
  StartFake();
  fake_->SetGetMode(FakePodResources::GetMode::kDisabled);
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 List");
  EXPECT_EQ(r->by_resource, Trainer());
  ExpectCalls(1, 1, 0);
}

TEST_F(PodResourcesTest, GetUnimplementedFallsBackToList) {
  StartFake();
  fake_->SetGetMode(FakePodResources::GetMode::kUnimplemented);
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 List");
  EXPECT_EQ(r->by_resource, Trainer());
  ExpectCalls(1, 1, 0);
}

TEST_F(PodResourcesTest, V1UnimplementedFallsBackToV1alpha1) {
  StartFake();
  fake_->SetV1Mode(FakePodResources::V1Mode::kUnimplemented);
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1alpha1 List");
  EXPECT_EQ(r->by_resource, Trainer());
  ExpectCalls(1, 1, 1);
}

// The kubelet lists a device once per NUMA node and per container holding it; every path
// must yield each ID once, in first-seen order.
TEST_F(PodResourcesTest, DeduplicatesAcrossNumaEntriesAndContainers) {
  StartFake();
  fake_->AddPod("ml", "numa", "uid-numa",
                {{"a", {{kResA, {"dev9", "dev2"}, {3, 0, 1}}, {kResVf, {"vf1"}, {}}}},
                 {"b", {{kResA, {"dev2", "dev5"}, {}}, {kResVf, {"vf1", "vf0"}, {1}}}},
                 {"c", {{kResA, {"dev9"}, {2}}}}});
  const DevicesByResource want = {{kResA, {"dev9", "dev2", "dev5"}}, {kResVf, {"vf1", "vf0"}}};
  auto get = Lookup("numa", "ml");
  ASSERT_TRUE(get.ok()) << Str(get);
  EXPECT_EQ(get->source, "v1 Get");
  EXPECT_EQ(get->by_resource, want);

  fake_->SetGetMode(FakePodResources::GetMode::kDisabled);
  auto list = Lookup("numa", "ml");
  ASSERT_TRUE(list.ok()) << Str(list);
  EXPECT_EQ(list->source, "v1 List");
  EXPECT_EQ(list->by_resource, want);

  fake_->SetV1Mode(FakePodResources::V1Mode::kUnimplemented);
  auto alpha = Lookup("numa", "ml");
  ASSERT_TRUE(alpha.ok()) << Str(alpha);
  EXPECT_EQ(alpha->source, "v1alpha1 List");
  EXPECT_EQ(alpha->by_resource, want);
}

TEST_F(PodResourcesTest, PodWithoutDevicesIsEmpty) {
  StartFake();
  fake_->AddPod("ml", "plain", "uid-plain", {{"main", {}}});
  auto r = Lookup("plain", "ml");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 Get");
  EXPECT_TRUE(r->by_resource.empty());
  ExpectCalls(1, 0, 0);
}

TEST_F(PodResourcesTest, UnknownPodIsEmptyNotAnError) {
  StartFake();
  // Get answers UNKNOWN "pod ghost not found in namespace ml".
  auto get = Lookup("ghost", "ml");
  ASSERT_TRUE(get.ok()) << Str(get);
  EXPECT_EQ(get->source, "v1 Get");
  EXPECT_TRUE(get->by_resource.empty());
  ExpectCalls(1, 0, 0);

  // Same name, other namespace: List matches by namespace too.
  fake_->SetGetMode(FakePodResources::GetMode::kDisabled);
  auto list = Lookup("trainer", "elsewhere");
  ASSERT_TRUE(list.ok()) << Str(list);
  EXPECT_EQ(list->source, "v1 List");
  EXPECT_TRUE(list->by_resource.empty());

  fake_->SetV1Mode(FakePodResources::V1Mode::kUnimplemented);
  auto alpha = Lookup("ghost", "ml");
  ASSERT_TRUE(alpha.ok()) << Str(alpha);
  EXPECT_EQ(alpha->source, "v1alpha1 List");
  EXPECT_TRUE(alpha->by_resource.empty());
}

// A pod named like the "disabled" phrase, unknown to Get, is "not found", not a fallback.
TEST_F(PodResourcesTest, UnknownPodNamedDisabledDoesNotFallBack) {
  StartFake();
  auto r = Lookup("get-method-disabled", "ml");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 Get");
  ExpectCalls(1, 0, 0);
}

// Kubelets <= 1.33 may list a terminated pod next to its same-name successor: List merges.
TEST_F(PodResourcesTest, ListMergesAPodListedTwice) {
  StartFake();
  fake_->AddPod("ml", "trainer", "uid-trainer-2", {{"main", {{kResA, {"mlx5_7"}, {}}}}});
  fake_->SetGetMode(FakePodResources::GetMode::kDisabled);
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->by_resource.at(kResA), (Ids{"mlx5_0", "mlx5_1", "mlx5_7"}));
}

TEST_F(PodResourcesTest, EmptyNameOrNamespaceIsInvalidArgument) {
  StartFake();
  for (const auto& [name, ns] : {std::pair<std::string, std::string>{"", "ml"}, {"trainer", ""}}) {
    auto r = Lookup(name, ns);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(r.status().message(), "K8S_POD_NAME"));
  }
  ExpectCalls(0, 0, 0);
}

TEST_F(PodResourcesTest, ResourceExhaustedTwiceThenSucceeds) {
  StartFake();
  fake_->FailNextWithResourceExhausted(2);
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 Get");
  EXPECT_EQ(r->by_resource, Trainer());
  ExpectCalls(3, 0, 0);
}

TEST_F(PodResourcesTest, ResourceExhaustedIsRetriedOnListToo) {
  StartFake();
  fake_->SetGetMode(FakePodResources::GetMode::kDisabled);
  fake_->FailNextWithResourceExhausted(2, Method::kV1List);
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 List");
  EXPECT_EQ(r->by_resource, Trainer());
  ExpectCalls(1, 3, 0);

  // And on v1alpha1 List.
  fake_->ResetCalls();
  fake_->SetV1Mode(FakePodResources::V1Mode::kUnimplemented);
  fake_->FailNextWithResourceExhausted(1, Method::kV1alpha1List);
  auto alpha = Lookup();
  ASSERT_TRUE(alpha.ok()) << Str(alpha);
  EXPECT_EQ(alpha->source, "v1alpha1 List");
  ExpectCalls(1, 1, 2);
}

TEST_F(PodResourcesTest, ResourceExhaustedForeverIsUnavailableAfterTheAttempts) {
  StartFake();
  fake_->FailNextWithResourceExhausted(-1);
  opts_.resource_exhausted_attempts = 4;
  auto r = Lookup();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(r.status().message(), "RESOURCE_EXHAUSTED"));
  EXPECT_TRUE(Contains(r.status().message(), "v1 Get"));
  EXPECT_TRUE(Contains(r.status().message(), PodResourcesSocketPath(tmp_.path())));
  EXPECT_TRUE(Contains(r.status().message(), "4 attempts"));
  ExpectCalls(4, 0, 0);
}

// Back-off between attempts: 50 ms then 100 ms (as logged at debug), each slept and
// jittered to no less than half: at least 25 + 50 ms in all (a lower bound that no slow
// machine breaks).
TEST_F(PodResourcesTest, ResourceExhaustedBacksOff) {
  StartFake();
  fake_->FailNextWithResourceExhausted(-1);
  opts_.resource_exhausted_attempts = 3;
  opts_.backoff_initial = milliseconds(50);
  std::mutex mu;
  std::vector<std::string> backoffs;  // "backoff_ms=N" of each retry, in order
  SetLogSink([&](const std::string& line) {
    const size_t at = line.find("backoff_ms=");
    if (line.find("rate-limited, retrying") == std::string::npos || at == std::string::npos) return;
    std::lock_guard<std::mutex> lock(mu);
    backoffs.push_back(line.substr(at, line.find(' ', at) - at));
  });
  SetLogLevel(LogLevel::kDebug);
  auto start = steady_clock::now();
  auto r = Lookup();
  auto elapsed = steady_clock::now() - start;
  SetLogLevel(LogLevel::kInfo);
  SetLogSink(nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(backoffs, (std::vector<std::string>{"backoff_ms=50", "backoff_ms=100"}));
  EXPECT_GE(elapsed, milliseconds(75));
  ExpectCalls(3, 0, 0);
}

// A peer that accepts connections (the kernel's backlog does) but never speaks HTTP/2: the
// call's deadline ends the lookup (not before it: a lower bound no slow machine breaks).
TEST_F(PodResourcesTest, SilentServerIsUnavailableWithinTheDeadline) {
  const std::string path = PodResourcesSocketPath(tmp_.path());
  ASSERT_EQ(::mkdir((tmp_.path() + "/pod-resources").c_str(), 0755), 0);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd.valid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd.get(), 16), 0);

  opts_.timeout = milliseconds(200);
  auto start = steady_clock::now();
  auto r = Lookup();
  auto elapsed = steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(r.status().message(), "v1 Get"));
  EXPECT_TRUE(Contains(r.status().message(), path));
  EXPECT_TRUE(Contains(r.status().message(), "DEADLINE_EXCEEDED"));
  EXPECT_GE(elapsed, milliseconds(150));
}

// A socket file nobody listens on (a dead kubelet): refused at once, not after the call's
// deadline, and no fallback to the checkpoint.
TEST_F(PodResourcesTest, StaleSocketIsUnavailable) {
  const std::string path = PodResourcesSocketPath(tmp_.path());
  ASSERT_EQ(::mkdir((tmp_.path() + "/pod-resources").c_str(), 0755), 0);
  {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  }  // closed, file left behind
  // A valid checkpoint is there, but a present socket means the kubelet API is the source.
  ASSERT_EQ(::mkdir((tmp_.path() + "/device-plugins").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(KubeletCheckpointPath(opts_.device_plugin_dir),
                        R"({"Data": {"PodDeviceEntries": [{"PodUID": "uid-trainer",
                            "ResourceName": "r/x", "DeviceIDs": ["d"]}]}})"));
  auto r = Lookup();
  ASSERT_FALSE(r.ok()) << Str(r);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(r.status().message(), "v1 Get"));
  EXPECT_TRUE(Contains(r.status().message(), "UNAVAILABLE"));
  EXPECT_FALSE(Contains(r.status().message(), "DEADLINE_EXCEEDED"));
}

// A fresh connection per lookup: a restarted kubelet (new socket inode) is reached.
TEST_F(PodResourcesTest, ReachesARestartedServer) {
  StartFake();
  ASSERT_TRUE(Lookup().ok());
  fake_.reset();
  auto second = std::make_unique<FakePodResources>(PodResourcesSocketPath(tmp_.path()));
  second->AddPod("ml", "trainer", "uid", {{"main", {{kResA, {"mlx5_9"}, {}}}}});
  ASSERT_TRUE(second->Start().ok());
  auto r = Lookup();
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->by_resource, (DevicesByResource{{kResA, {"mlx5_9"}}}));
}

// 250 pods with long IDs make a ~6 MiB List response: over gRPC's 4 MiB default, within
// the 16 MiB the lookup allows.
TEST_F(PodResourcesTest, ListLargerThanFourMiBIsReceived) {
  fake_ = std::make_unique<FakePodResources>(PodResourcesSocketPath(tmp_.path()));
  const std::string pad(150, 'x');
  for (int p = 0; p < 250; ++p) {
    std::vector<FakeContainer> containers;
    for (int c = 0; c < 2; ++c) {
      FakeDevices d{kResA, {}, {}};
      for (int i = 0; i < 64; ++i) {
        d.ids.push_back("dev-" + std::to_string(p) + "-" + std::to_string(c) + "-" +
                        std::to_string(i) + "-" + pad);
      }
      containers.push_back({"c" + std::to_string(c), {d}});
    }
    fake_->AddPod("bulk", "pod-" + std::to_string(p), "uid-" + std::to_string(p), containers);
  }
  ASSERT_TRUE(fake_->Start().ok());
  fake_->SetGetMode(FakePodResources::GetMode::kDisabled);

  auto r = Lookup("pod-249", "bulk");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "v1 List");
  ASSERT_EQ(r->by_resource.at(kResA).size(), 128u);
  EXPECT_EQ(r->by_resource.at(kResA)[0], "dev-249-0-0-" + pad);
  EXPECT_EQ(r->by_resource.at(kResA)[127], "dev-249-1-63-" + pad);

  // Proof that the response is over 4 MiB: gRPC's default limit rejects it, without retries.
  opts_.max_receive_bytes = 4 << 20;
  fake_->ResetCalls();
  auto small = Lookup("pod-249", "bulk");
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(small.status().message(), "v1 List"));
  EXPECT_TRUE(Contains(small.status().message(), "RESOURCE_EXHAUSTED"));
  EXPECT_TRUE(Contains(small.status().message(), "receive limit"));
  ExpectCalls(1, 1, 0);
}

TEST_F(PodResourcesTest, LogsTheAnsweringStepAtDebug) {
  StartFake();
  fake_->SetGetMode(FakePodResources::GetMode::kDisabled);
  std::mutex mu;
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  });
  SetLogLevel(LogLevel::kDebug);
  auto r = Lookup();
  SetLogLevel(LogLevel::kInfo);
  SetLogSink(nullptr);
  ASSERT_TRUE(r.ok()) << Str(r);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_TRUE(Contains(all, "v1 List"));
  EXPECT_TRUE(Contains(all, "ml/trainer"));
}

// ---------------------------------------------------------------------------------------
// The checkpoint fallback (no socket)

class CheckpointLookupTest : public PodResourcesTest {
 protected:
  void SetUp() override {
    PodResourcesTest::SetUp();
    ASSERT_EQ(::mkdir((tmp_.path() + "/device-plugins").c_str(), 0755), 0);
    // The same pods as the gRPC tests, only to render the checkpoint.
    fake_ = std::make_unique<FakePodResources>(tmp_.path() + "/unused.sock");
    fake_->AddPod("ml", "other", "uid-other", {{"c", {{kResVf, {"0000:3b:00.2"}, {0}}}}});
    fake_->AddPod("ml", "trainer", "uid-trainer",
                  {{"main", {{kResA, {"mlx5_0", "mlx5_1"}, {0, 1}}}},
                   {"sidecar", {{kResA, {"mlx5_1"}, {1}}, {kResVf, {"0000:3b:00.4"}, {}}}}});
  }
  std::string Path() const { return KubeletCheckpointPath(opts_.device_plugin_dir); }
};

// Another kubelet root (--root-dir) moves pod-resources/, not the checkpoint: that stays
// in the device-plugin directory.
TEST_F(CheckpointLookupTest, CheckpointIsInTheDevicePluginDirNotUnderTheRoot) {
  opts_.kubelet_root = tmp_.path() + "/data-kubelet";
  ASSERT_TRUE(WriteFile(Path(), fake_->CheckpointJson(false)));
  auto r = Lookup("ignored-name", "ignored-ns", "uid-trainer");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_FALSE(r->by_resource.empty());
}

TEST_F(CheckpointLookupTest, NumaMapFormatMatchedByUid) {
  ASSERT_TRUE(WriteFile(Path(), fake_->CheckpointJson(false)));
  auto r = Lookup("ignored-name", "ignored-ns", "uid-trainer");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "checkpoint");
  EXPECT_EQ(r->by_resource, Trainer());
}

TEST_F(CheckpointLookupTest, LegacyFlatFormatMatchedByUid) {
  ASSERT_TRUE(WriteFile(Path(), fake_->CheckpointJson(true)));
  auto r = Lookup("trainer", "ml", "uid-other");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "checkpoint");
  EXPECT_EQ(r->by_resource, (DevicesByResource{{kResVf, {"0000:3b:00.2"}}}));
}

TEST_F(CheckpointLookupTest, UnknownUidIsEmpty) {
  ASSERT_TRUE(WriteFile(Path(), fake_->CheckpointJson(false)));
  auto r = Lookup("trainer", "ml", "uid-nobody");
  ASSERT_TRUE(r.ok()) << Str(r);
  EXPECT_EQ(r->source, "checkpoint");
  EXPECT_TRUE(r->by_resource.empty());
}

TEST_F(CheckpointLookupTest, MissingUidIsAnError) {
  ASSERT_TRUE(WriteFile(Path(), fake_->CheckpointJson(false)));
  auto r = Lookup("trainer", "ml", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "K8S_POD_UID"));
}

TEST_F(CheckpointLookupTest, BadJsonIsAnErrorNamingTheFile) {
  ASSERT_TRUE(WriteFile(Path(), "{\"Data\": {\"PodDeviceEntries\": [ {\"PodUID\": "));
  auto r = Lookup();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_TRUE(Contains(r.status().message(), Path()));
  EXPECT_TRUE(Contains(r.status().message(), "not valid JSON"));
}

TEST_F(CheckpointLookupTest, NoCheckpointEitherIsNotFoundNamingBothPaths) {
  auto r = Lookup();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), Path()));
  EXPECT_TRUE(Contains(r.status().message(), PodResourcesSocketPath(tmp_.path())));
}

// ---------------------------------------------------------------------------------------
// ParseCheckpointDevices

// The shape of a real 1.20+ checkpoint, with unknown keys and other pods' entries.
constexpr char kCheckpoint[] = R"({
  "Data": {
    "PodDeviceEntries": [
      {"PodUID": "u1", "ContainerName": "a", "ResourceName": "rdma/hca",
       "DeviceIDs": {"10": ["d10"], "-1": ["dnone"], "2": ["d2", "d0"], "0": ["d0"]},
       "AllocResp": "CgQKAnh4", "FutureKey": 1},
      {"PodUID": "u2", "ContainerName": "a", "ResourceName": "rdma/hca",
       "DeviceIDs": {"0": ["other"]}, "AllocResp": ""},
      {"PodUID": "u1", "ContainerName": "b", "ResourceName": "rdma/hca",
       "DeviceIDs": {"1": ["d1", "d2"]}, "AllocResp": ""},
      {"PodUID": "u1", "ContainerName": "b", "ResourceName": "nvidia.com/gpu",
       "DeviceIDs": null, "AllocResp": ""},
      {"PodUID": "u2", "ContainerName": "x", "ResourceName": 7, "DeviceIDs": 3}
    ],
    "RegisteredDevices": {"rdma/hca": ["d0", "d1", "d2", "d10", "dnone", "other"]}
  },
  "Checksum": 3660592824,
  "BootID": "b"
})";

TEST(ParseCheckpointTest, NumaBucketsInNumericOrderDeduplicated) {
  auto r = ParseCheckpointDevices(kCheckpoint, "u1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (DevicesByResource{{"rdma/hca", {"dnone", "d0", "d2", "d10", "d1"}}}));
}

TEST(ParseCheckpointTest, ErrorsConcernOnlyTheRequestedPod) {
  auto r = ParseCheckpointDevices(kCheckpoint, "u2");
  // u2's second entry is malformed (ResourceName 7): errors concern the requested pod.
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "PodDeviceEntries[4]"));
  auto none = ParseCheckpointDevices(kCheckpoint, "u3");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

TEST(ParseCheckpointTest, LegacyFlatList) {
  constexpr char kOld[] = R"({"Data": {"PodDeviceEntries": [
      {"PodUID": "u1", "ContainerName": "a", "ResourceName": "r/x", "DeviceIDs": ["b", "a"]},
      {"PodUID": "u1", "ContainerName": "b", "ResourceName": "r/x", "DeviceIDs": ["a", "c"]},
      {"PodUID": "u1", "ContainerName": "b", "ResourceName": "r/y", "DeviceIDs": []}],
    "RegisteredDevices": {}}, "Checksum": 1})";
  auto r = ParseCheckpointDevices(kOld, "u1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (DevicesByResource{{"r/x", {"b", "a", "c"}}}));
}

TEST(ParseCheckpointTest, EmptyUidIsInvalidArgument) {
  auto r = ParseCheckpointDevices(kCheckpoint, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "K8S_POD_UID"));
}

TEST(ParseCheckpointTest, FreshNodeShapesAreEmpty) {
  for (const char* text : {R"({})", R"({"Data": null})", R"({"Data": {}})",
                           R"({"Data": {"PodDeviceEntries": null}, "Checksum": 0})"}) {
    auto r = ParseCheckpointDevices(text, "u1");
    ASSERT_TRUE(r.ok()) << text << ": " << r.status().ToString();
    EXPECT_TRUE(r->empty()) << text;
  }
}

TEST(ParseCheckpointTest, MalformedShapesAreErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not valid JSON"},
      {"{\"Data\": ", "not valid JSON"},
      {"[]", "not a JSON object"},
      {R"({"Data": []})", "Data is not an object"},
      {R"({"Data": {"PodDeviceEntries": {}}})", "not an array"},
      {R"({"Data": {"PodDeviceEntries": [{"PodUID": "u1", "ResourceName": "r/x",
          "DeviceIDs": "d0"}]}})",
       "neither an array nor an object"},
      {R"({"Data": {"PodDeviceEntries": [{"PodUID": "u1", "ResourceName": "r/x",
          "DeviceIDs": {"0": "d0"}}]}})",
       "not an array"},
      {R"({"Data": {"PodDeviceEntries": [{"PodUID": "u1", "ResourceName": "r/x",
          "DeviceIDs": [1]}]}})",
       "not a string"},
      {R"({"Data": {"PodDeviceEntries": [{"PodUID": "u1", "DeviceIDs": ["d"]}]}})", "ResourceName"},
  };
  for (const auto& [text, want] : cases) {
    auto r = ParseCheckpointDevices(text, "u1");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_TRUE(Contains(r.status().message(), want)) << text;
  }
}

TEST(ParseCheckpointTest, ReadMissingFileIsNotFound) {
  auto r = ReadCheckpointDevices("/nonexistent/kubelet_internal_checkpoint", "u1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "/nonexistent/kubelet_internal_checkpoint"));
}

// The device-plugin pod mounts the kubelet's device-plugins/ directory read-write (to
// register its socket), so it can put anything where the checkpoint is: a symlink to
// /dev/zero, a FIFO nobody writes, a file of gigabytes. Each is refused at once. Each read
// runs in a child with a deadline and a memory cap: the plain reader this replaced read
// /dev/zero until memory ran out and blocked on the FIFO for ever.
TEST(ParseCheckpointTest, HostileCheckpointFilesAreRefusedAtOnce) {
  TempDir tmp("hcashare-ckpt-");
  const std::string path = tmp.path() + "/kubelet_internal_checkpoint";
  const auto read = [&] {
    return testing::RunInChild(
        [&] {
          auto r = ReadCheckpointDevices(path, "u1");
          return r.ok() ? std::string("read") : r.status().message();
        },
        std::chrono::seconds(10));
  };
  ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
  EXPECT_THAT(read().value_or("no answer"), HasSubstr(path + " is a symlink"));
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_THAT(read().value_or("no answer"), HasSubstr(path + " is a FIFO, not a regular file"));
  ASSERT_EQ(::unlink(path.c_str()), 0);
  { std::ofstream(path) << "{}"; }  // then a sparse file one byte over the cap
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kMaxCheckpointBytes) + 1), 0);
  EXPECT_THAT(read().value_or("no answer"),
              HasSubstr("the limit is " + std::to_string(kMaxCheckpointBytes) + " bytes"));
}

}  // namespace
}  // namespace hcashare::kubelet
