#include "hostfacts/platform.h"

#include <algorithm>

#include "hostfacts/attrs.h"
#include "hostfacts/container_runtime.h"
#include "hostfacts/reader.h"

namespace hcashare::hostfacts {
namespace {

constexpr const char* kMemoryPeers = "/sys/kernel/mm/memory_peers/";
// The GPUDirect RDMA peer-memory modules: NVIDIA's, and Mellanox's legacy one.
constexpr const char* kPeermemModules[] = {"nvidia_peermem", "nv_peer_mem"};
constexpr const char* kNumaNodes = "/sys/devices/system/node/";
constexpr const char* kNvidiaGpus = "/proc/driver/nvidia/gpus/";
constexpr const char* kContainerdConfig = "/etc/containerd/config.toml";
// containerd's config is the node administrator's; more than this is not a config.
constexpr size_t kMaxContainerdConfigBytes = size_t{1} << 20;

}  // namespace

void ReadGpuDirectAndIommu(const Host& host, HostSnapshot* snap) {
  snap->sys_module_listed = host.Exists("/sys/module");
  for (const char* m : kPeermemModules) {
    if (host.Exists(std::string("/sys/module/") + m)) snap->peermem_modules.push_back(m);
  }
  for (const auto& name : List(host, kMemoryPeers)) {
    if (host.Exists(kMemoryPeers + name + "/version")) snap->memory_peers.push_back(name);
  }
  const std::string version = host.ReadFile("/proc/driver/nvidia/version").value_or("");
  snap->nvidia_version = version.substr(0, version.find('\n'));
  snap->kernel_release = Trimmed(host, "/proc/sys/kernel/osrelease");
  snap->iommu_units = List(host, "/sys/class/iommu");
  snap->iommu_cmdline = ParseIommuCmdline(host.ReadFile("/proc/cmdline").value_or(""));
}

void ReadCpus(const Host& host, HostSnapshot* snap) {
  for (const auto& e : List(host, kNumaNodes)) {
    // node<N> directories; the rest (has_cpu, online, possible, ...) are attributes.
    if (e.rfind("node", 0) != 0 || e.size() == 4 || e[4] < '0' || e[4] > '9') continue;
    NumaNode n;
    n.id = ParseNonNegative(std::string_view(e).substr(4));
    if (n.id < 0) continue;
    n.cpumap = Trimmed(host, kNumaNodes + e + "/cpumap");
    n.cpulist = Trimmed(host, kNumaNodes + e + "/cpulist");
    snap->numa_nodes.push_back(std::move(n));
  }
  std::sort(snap->numa_nodes.begin(), snap->numa_nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  snap->cpu_arch = Trimmed(host, "/proc/sys/kernel/arch");
  if (snap->cpu_arch.empty()) {
    snap->cpu_arch =
        ParseCpuModaliasArch(host.ReadFile("/sys/devices/system/cpu/modalias").value_or(""));
  }
  const CpuIdentity cpu = ParseCpuInfo(host.ReadFile("/proc/cpuinfo").value_or(""));
  snap->cpu_vendor = cpu.vendor;
  snap->cpu_family = cpu.family;
  snap->cpu_model = cpu.model;
}

std::vector<NvidiaGpu> ReadNvidiaGpus(const Host& host) {
  std::vector<NvidiaGpu> out;
  for (const auto& address : List(host, kNvidiaGpus)) {
    // Reading `information` briefly wakes the GPU (a dynamic-power reference): once per read.
    NvidiaGpu gpu = ParseNvidiaGpuInformation(
        host.ReadFile(kNvidiaGpus + address + "/information").value_or(""));
    gpu.address = address;
    out.push_back(std::move(gpu));
  }
  std::sort(out.begin(), out.end(),
            [](const NvidiaGpu& a, const NvidiaGpu& b) { return a.address < b.address; });
  return out;
}

void ReadContainerRuntime(const Host& host, HostSnapshot* snap) {
  if (Result<std::string> text = host.ReadFile(kContainerdConfig); text.ok()) {
    snap->containerd_config_present = true;
    if (text->size() <= kMaxContainerdConfigBytes) {
      const ContainerdCdiConfig c = ParseContainerdConfig(*text);
      snap->containerd_config_version = c.version;
      snap->containerd_enable_cdi = c.enable_cdi;
      snap->containerd_config_imports = c.imports;
    }
  }
  snap->crio_config_present =
      host.Exists("/etc/crio/crio.conf") || host.Exists("/etc/crio/crio.conf.d");
}

}  // namespace hcashare::hostfacts
