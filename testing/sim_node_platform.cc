// SimNode: the CPUs, the GPUs and the bridges' config space (see sim_node.h).
#include <cstdint>
#include <fstream>
#include <sstream>

#include "testing/sim_node.h"

namespace hcashare::fake {
namespace {

constexpr size_t kConfigSize = 4096;      // PCIe: extended config space
constexpr size_t kUnprivilegedRead = 64;  // what a read without CAP_SYS_ADMIN returns

// Writes `v` as `bytes` little-endian bytes at `at` of `config`.
void Put(std::string* config, size_t at, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    (*config)[at + static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
}

// An extended capability header: ID, version 1, next capability at `next`.
uint32_t ExtCap(uint32_t id, uint32_t next) { return id | (1u << 16) | (next << 20); }

// A switch port's config space: a type 1 header and the extended capability list
// AER (0x100) -> ACS (0x148, when acs_ctrl >= 0) -> Secondary PCIe (0x158).
std::string SwitchPortConfig(uint32_t vendor, uint32_t device, int acs_ctrl) {
  std::string c(kConfigSize, '\0');
  Put(&c, 0x00, vendor, 2);
  Put(&c, 0x02, device, 2);
  Put(&c, 0x06, 0x0010, 2);                                          // status: capabilities list
  Put(&c, 0x09, 0x060400, 3);                                        // class: PCI-to-PCI bridge
  Put(&c, 0x0e, 0x01, 1);                                            // header type 1
  Put(&c, 0x34, 0x40, 1);                                            // first capability
  Put(&c, 0x100, ExtCap(0x0001, acs_ctrl >= 0 ? 0x148 : 0x158), 4);  // AER
  if (acs_ctrl >= 0) {
    Put(&c, 0x148, ExtCap(0x000d, 0x158), 4);  // ACS
    Put(&c, 0x14c, 0x005f, 2);                 // capability: SV TB RR CR UF DT (no egress control)
    Put(&c, 0x14e, static_cast<uint32_t>(acs_ctrl), 2);
  }
  Put(&c, 0x158, ExtCap(0x0019, 0), 4);  // Secondary PCI Express, the end of the list
  return c;
}

// The hex value of the sysfs ID file at on-disk `path` ("0x8086\n"); 0 when unreadable.
uint32_t HexFile(const std::string& path) {
  std::ifstream in(path);
  uint32_t v = 0;
  in >> std::hex >> v;
  return in ? v : 0;
}

}  // namespace

Status SimNode::SetPciConfig(const std::string& address, const std::string& bytes) {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no device " + address);
  return WriteFile(it->second + "/config", bytes);
}

Status SimNode::SetBridgeAcs(const std::string& address, int acs_ctrl, bool unprivileged) {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no device " + address);
  auto id = [&](const char* file) { return HexFile(Path(it->second + "/" + file)); };
  std::string config = SwitchPortConfig(id("vendor"), id("device"), acs_ctrl);
  if (unprivileged) config.resize(kUnprivilegedRead);
  return SetPciConfig(address, config);
}

Status SimNode::AddNumaNode(int id, const std::string& cpumap, const std::string& cpulist) {
  const std::string dir = "/sys/devices/system/node/node" + std::to_string(id);
  RETURN_IF_ERROR(WriteFile(dir + "/cpumap", cpumap + "\n"));
  return WriteFile(dir + "/cpulist", cpulist + "\n");
}

Status SimNode::SetCpu(const std::string& arch, const std::string& vendor, int family, int model,
                       int cpus) {
  RETURN_IF_ERROR(WriteFile("/proc/sys/kernel/arch", arch + "\n"));
  std::ostringstream info;
  for (int i = 0; i < cpus; ++i) {
    info << "processor\t: " << i << "\nvendor_id\t: " << vendor << "\ncpu family\t: " << family
         << "\nmodel\t\t: " << model << "\nmodel name\t: Simulated CPU @ 2.00GHz\nstepping\t: 8\n"
         << "physical id\t: 0\nflags\t\t: fpu vme de pse tsc msr pae mce\n\n";
  }
  return WriteFile("/proc/cpuinfo", info.str());
}

Status SimNode::AddNvidiaGpuInfo(const std::string& address, const std::string& model,
                                 const std::string& uuid, int minor) {
  std::ostringstream info;
  info << "Model: \t\t " << model << "\nIRQ:   \t\t 180\n";
  if (!uuid.empty()) info << "GPU UUID: \t " << uuid << "\n";
  info << "Video BIOS: \t 96.00.74.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
       << "DMA Mask: \t 0xfffffffffffff\nBus Location: \t " << address << "\nDevice Minor: \t "
       << minor << "\nGPU Excluded:\t No\n";
  return WriteFile("/proc/driver/nvidia/gpus/" + address + "/information", info.str());
}

}  // namespace hcashare::fake
