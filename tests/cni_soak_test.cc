// The CNI concurrency soak (issue 9): ADD/DEL cycles of the real hcashare-cni binary over
// 50 pod network namespaces at parallelism 8, on VFs whose netdevs are veths, with
// host-local IPAM (one shared subnet), a MAC, an MTU and a Multus device-info file. At the
// end nothing may be left: every VF netdev is back in the host with its name, MAC, MTU and
// down; every pod namespace has only its loopback; no state file, owner marker, held lock,
// IPAM lease or device-info file remains.
//
// HCASHARE_CNI_SOAK_CYCLES sets the number of cycles (default kDefaultCycles, what CI
// runs); the full run is HCASHARE_CNI_SOAK_CYCLES=1000.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "tests/cni_binary_fixture.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kPods = 50;
constexpr int kParallel = 8;
constexpr int kDefaultCycles = 100;

int Cycles() {
  const char* v = std::getenv("HCASHARE_CNI_SOAK_CYCLES");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : kDefaultCycles;
}

// The q-quantile of `ms` (sorted in place), in milliseconds.
double Quantile(std::vector<double>* ms, double q) {
  if (ms->empty()) return 0;
  std::sort(ms->begin(), ms->end());
  return (*ms)[std::min(ms->size() - 1, static_cast<size_t>(q * ms->size()))];
}

class CniSoakTest : public CniBinaryTest {};

TEST_F(CniSoakTest, AddDelCyclesLeakNothing) {
  const int cycles = Cycles();
  std::vector<std::string> devices, pods;
  for (int i = 0; i < kPods; ++i) {
    devices.push_back(AddVfNumber(i));
    pods.push_back(AddPod());
  }
  const std::vector<LinkInfo> host_before = Links(host_ns_);
  const std::string devinfo_dir = tmp_.path() + "/devinfo";

  std::mutex mu;
  std::vector<double> add_ms, del_ms;
  std::atomic<int> failures{0};
  // Worker w owns slots w, w + kParallel, ...: one sandbox is never handled by two
  // invocations at once, as with a real runtime. IPAM and the state dir are shared.
  auto worker = [&](int w) {
    const int slots = (kPods - w + kParallel - 1) / kParallel;
    for (int c = w, j = 0; c < cycles; c += kParallel, ++j) {
      const int slot = w + kParallel * (j % slots);
      const std::string ctr = "s" + std::to_string(slot) + "c" + std::to_string(c);
      char mac[32];
      std::snprintf(mac, sizeof(mac), "02:00:00:%02x:%02x:%02x", slot, (c >> 8) & 0xff, c & 0xff);
      json conf = Conf("1.1.0", devices[slot]);
      conf["mac"] = mac;
      conf["mtu"] = 1400;
      conf["ipam"] = HostLocal();
      conf["runtimeConfig"] = {{"CNIDeviceInfoFile", devinfo_dir + "/" + ctr + ".json"}};
      const auto t0 = Clock::now();
      CniRun add = Run("ADD", pods[slot], conf, "net1", ctr);
      const auto t1 = Clock::now();
      CniRun del = Run("DEL", pods[slot], conf, "net1", ctr);
      const auto t2 = Clock::now();
      const bool ok = add.exit_code == 0 && del.exit_code == 0 &&
                      add.out["interfaces"][0]["mac"] == mac && add.out["ips"].size() == 1;
      if (!ok) {
        ++failures;
        ADD_FAILURE() << "slot " << slot << " cycle " << c << ": " << add.raw << add.err << " / "
                      << del.raw << del.err;
      }
      std::lock_guard<std::mutex> lock(mu);
      add_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      del_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
  };
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < kParallel; ++w) workers.emplace_back(worker, w);
  for (auto& t : workers) t.join();
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();

  std::printf(
      "[ soak ] %d cycles, %d netns, parallelism %d: %.1f s, %.1f cycles/s; "
      "ADD p50 %.0f p99 %.0f max %.0f ms; DEL p50 %.0f p99 %.0f max %.0f ms; %d failures\n",
      cycles, kPods, kParallel, wall_s, cycles / wall_s, Quantile(&add_ms, 0.5),
      Quantile(&add_ms, 0.99), Quantile(&add_ms, 1), Quantile(&del_ms, 0.5),
      Quantile(&del_ms, 0.99), Quantile(&del_ms, 1), failures.load());
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(add_ms.size(), static_cast<size_t>(cycles));

  // Nothing leaked: netdevs, state, markers, locks, leases, device-info files.
  EXPECT_EQ(Links(host_ns_), host_before) << "every VF netdev back with its name, MAC, MTU";
  for (const auto& ns : netns_) EXPECT_EQ(Links(ns).size(), 1u) << ns << ": only lo";
  EXPECT_EQ(StateFiles(), 0u) << "attachment states and owner markers";
  size_t held = 0;
  EXPECT_LE(LockFiles(&held), static_cast<size_t>(kPods)) << "at most one lock file per device";
  EXPECT_EQ(held, 0u) << "no lock is held";
  EXPECT_EQ(IpamLeases(), 0u) << "every host-local lease released";
  EXPECT_TRUE(fs::exists(devinfo_dir)) << "ADD wrote device-info files";
  EXPECT_TRUE(fs::is_empty(devinfo_dir)) << "DEL removed them";
}

}  // namespace
}  // namespace hcashare::cni
