// Tests of `hcashare topo --format nccl-xml` (topo/nccl_xml.h): the nesting NCCL's own
// sysfs walk makes, the cpu and pci attributes and which are left out, the devices left out,
// values NCCL's parser cannot read back, NCCL's limits; the golden file of each canned host
// (HCASHARE_UPDATE_GOLDEN=1 rewrites them), and the CLI on a snapshot and on a host root.
// Every output is parsed by a strict reader of NCCL's dump layout (ParseNcclXml).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/temp_dir.h"
#include "tests/canned_snapshots.h"
#include "tests/cli_fixtures.h"
#include "tests/test_util.h"
#include "topo/nccl_xml.h"

namespace hcashare::topo {
namespace {

using hostfacts::HostSnapshot;
using hostfacts::PciFunction;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---------------------------------------------------------------------------------------
// A strict reader of the layout NCCL dumps and parses: one element a line, two spaces of
// indent per level, `key="value"` separated by one space, leaves self-closed, every open
// element closed by name. Values may hold no '"', '<' or '&' (NCCL decodes no escapes).

struct XNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<XNode> children;

  // The value of `key`; "<absent>" when it has none.
  std::string Attr(const std::string& key) const {
    for (const auto& [k, v] : attrs) {
      if (k == key) return v;
    }
    return "<absent>";
  }
  bool Has(const std::string& key) const { return Attr(key) != "<absent>"; }
  // The names of the attributes, in order.
  std::vector<std::string> Keys() const {
    std::vector<std::string> out;
    for (const auto& a : attrs) out.push_back(a.first);
    return out;
  }
  // The busids of the pci children, in order.
  std::vector<std::string> PciChildren() const {
    std::vector<std::string> out;
    for (const auto& c : children) out.push_back(c.Attr("busid"));
    return out;
  }
};

class LayoutReader {
 public:
  explicit LayoutReader(const std::string& text) {
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = text.find('\n', start);
      if (end == std::string::npos) {
        lines_.push_back(text.substr(start));
        ended_ = false;
        break;
      }
      lines_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }

  ::testing::AssertionResult Read(XNode* root) {
    if (!ended_) return ::testing::AssertionFailure() << "no newline at the end";
    auto r = Element(0, root);
    if (r && next_ != lines_.size()) {
      return ::testing::AssertionFailure() << "text after the root, line " << next_ + 1;
    }
    return r;
  }

 private:
  ::testing::AssertionResult Fail(const std::string& why) const {
    return ::testing::AssertionFailure() << "line " << next_ << ": " << why;
  }

  ::testing::AssertionResult Element(size_t depth, XNode* out) {
    if (next_ >= lines_.size()) return Fail("missing element");
    const std::string& line = lines_[next_++];
    const std::string indent(2 * depth, ' ');
    if (line.compare(0, indent.size(), indent) != 0 || line.size() <= indent.size() + 1 ||
        line[indent.size()] != '<' || line[indent.size() + 1] == ' ' ||
        line[indent.size() + 1] == '/' || line[indent.size() + 1] == '?') {
      return Fail("not an element at depth " + std::to_string(depth) + ": " + line);
    }
    size_t p = indent.size() + 1;
    while (p < line.size() && std::isalnum(static_cast<unsigned char>(line[p]))) {
      out->name += line[p++];
    }
    while (p < line.size() && line[p] == ' ') {
      const size_t eq = line.find("=\"", p);
      if (eq == std::string::npos) return Fail("attribute without =\"");
      const size_t close = line.find('"', eq + 2);
      if (close == std::string::npos) return Fail("unterminated value");
      const std::string key = line.substr(p + 1, eq - p - 1);
      const std::string value = line.substr(eq + 2, close - eq - 2);
      if (key.empty() || key.find_first_of(" <>/\"") != std::string::npos) {
        return Fail("bad attribute name: " + line);
      }
      if (value.find_first_of("<&") != std::string::npos) return Fail("unescaped value");
      out->attrs.emplace_back(key, value);
      p = close + 1;
    }
    if (out->name.empty() || out->attrs.size() > 16) return Fail("bad element: " + line);
    if (line.compare(p, std::string::npos, "/>") == 0) return ::testing::AssertionSuccess();
    if (line.compare(p, std::string::npos, ">") != 0) return Fail("bad tag end: " + line);
    const std::string close = indent + "</" + out->name + ">";
    while (next_ < lines_.size() && lines_[next_] != close) {
      out->children.emplace_back();
      auto r = Element(depth + 1, &out->children.back());
      if (!r) return r;
    }
    if (next_ >= lines_.size()) return Fail("unclosed <" + out->name + ">");
    if (out->children.empty()) return Fail("an empty element is not self-closed");
    ++next_;
    return ::testing::AssertionSuccess();
  }

  std::vector<std::string> lines_;
  bool ended_ = true;
  size_t next_ = 0;
};

// The pci element `busid` under `n`, and its parent; nulls when absent.
std::pair<const XNode*, const XNode*> FindPci(const XNode& n, const std::string& busid) {
  for (const auto& c : n.children) {
    if (c.name == "pci" && c.Attr("busid") == busid) return {&c, &n};
    auto found = FindPci(c, busid);
    if (found.first != nullptr) return found;
  }
  return {nullptr, nullptr};
}

// The file of `snap`, read back; fails the test when it is an error or malformed.
XNode Xml(const HostSnapshot& snap) {
  XNode root;
  auto xml = FormatNcclXml(snap);
  EXPECT_TRUE(xml.ok()) << xml.status().ToString();
  if (!xml.ok()) return root;
  EXPECT_TRUE(LayoutReader(*xml).Read(&root)) << *xml;
  EXPECT_EQ(root.name, "system");
  EXPECT_EQ(root.Keys(), std::vector<std::string>{"version"});
  EXPECT_EQ(root.Attr("version"), "1");
  return root;
}

// ---------------------------------------------------------------------------------------
// In-memory hosts

constexpr int32_t kBridge = 0x060400;
constexpr int32_t kGpuClass = 0x030200;
constexpr int32_t kIbClass = 0x020700;
constexpr int32_t kEthClass = 0x020000;

// A snapshot under construction: an Intel host of two NUMA nodes; functions by sysfs path,
// the bridges of each path added as they appear.
class Host {
 public:
  Host() {
    snap_.pci_listed = true;
    snap_.cpu_arch = "x86_64";
    snap_.cpu_vendor = "GenuineIntel";
    snap_.cpu_family = 6;
    snap_.cpu_model = 143;
    snap_.numa_nodes = {{0, "00000000,0000ffff", "0-15"}, {1, "00000000,ffff0000", "16-31"}};
  }

  // The function at /sys/devices/`path` (its last component is its address), of class
  // `cls` on NUMA node `numa`; the bridges above it are added as class 0x060400.
  PciFunction& Add(const std::string& path, int32_t cls, int numa = 0) {
    std::string prefix = "/sys/devices";
    size_t start = 0;
    PciFunction* f = nullptr;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string::npos) end = path.size();
      const std::string part = path.substr(start, end - start);
      prefix += "/" + part;
      start = end + 1;
      if (part.rfind("pci", 0) == 0) continue;
      auto [it, added] = pci_.try_emplace(part);
      f = &it->second;
      if (added) {
        f->address = part;
        f->class_code = kBridge;
        f->details = true;
        f->sysfs_path = prefix;
        f->numa_node = numa;
      }
    }
    f->class_code = cls;
    return *f;
  }
  // An RDMA NIC (a PF, or a VF of `physfn`).
  PciFunction& Nic(const std::string& path, const std::string& rdma, int numa = 0,
                   const std::string& physfn = "") {
    PciFunction& f = Add(path, kIbClass, numa);
    f.vendor = "15b3";
    f.device = "101b";
    f.rdma_devices = {rdma};
    f.physfn = physfn;
    return f;
  }
  PciFunction& Gpu(const std::string& path, int numa = 0) {
    PciFunction& f = Add(path, kGpuClass, numa);
    f.vendor = "10de";
    f.device = "2330";
    return f;
  }
  PciFunction& Fn(const std::string& address) { return pci_.at(address); }
  HostSnapshot& snap() { return snap_; }

  HostSnapshot Build() const {
    HostSnapshot s = snap_;
    for (const auto& [address, f] : pci_) s.pci.push_back(f);  // by address, as FindPci needs
    return s;
  }

 private:
  HostSnapshot snap_;
  std::map<std::string, PciFunction> pci_;
};

// Root port 15:01.0 -> switch 16:00.0 (ports 17:00.0, 17:01.0, 17:02.0) -> GPU 18:00.0,
// mlx5_0 19:00.0, and a nested switch 1a:00.0 (port 1b:00.0) -> GPU 1c:00.0.
constexpr const char* kSwitchGpu = "pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0";
constexpr const char* kSwitchNic = "pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0";
constexpr const char* kNestedGpu =
    "pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1a:00.0/0000:1b:00.0/0000:1c:00.0";

// ---------------------------------------------------------------------------------------
// Nesting

// A switch is its upstream port: the root port and the downstream ports get no element, a
// nested switch nests, and the GPU and NIC under one switch are siblings sorted by busid.
TEST(NcclXmlTest, SwitchesNestAsNcclWalksThem) {
  Host h;
  h.Gpu(kSwitchGpu);
  h.Nic(kSwitchNic, "mlx5_0");
  h.Gpu(kNestedGpu);
  const XNode root = Xml(h.Build());
  ASSERT_EQ(root.children.size(), 1u);
  const XNode& cpu = root.children[0];
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_EQ(cpu.PciChildren(), std::vector<std::string>{"0000:16:00.0"});
  const XNode& sw = cpu.children[0];
  EXPECT_EQ(sw.Attr("class"), "0x060400");
  EXPECT_EQ(sw.PciChildren(),
            (std::vector<std::string>{"0000:18:00.0", "0000:19:00.0", "0000:1a:00.0"}));
  EXPECT_EQ(sw.children[0].Attr("class"), "0x030200");
  EXPECT_EQ(sw.children[1].Attr("class"), "0x020700");
  EXPECT_THAT(sw.children[0].children, IsEmpty()) << "no gpu element";
  EXPECT_THAT(sw.children[1].children, IsEmpty()) << "no nic or net element";
  EXPECT_EQ(sw.children[2].PciChildren(), std::vector<std::string>{"0000:1c:00.0"});
  for (const char* port : {"0000:15:01.0", "0000:17:00.0", "0000:17:01.0", "0000:1b:00.0"}) {
    EXPECT_EQ(FindPci(root, port).first, nullptr) << port;
  }
}

// A NIC on a root port, and a GPU on the host bridge itself, hang straight off their cpu.
TEST(NcclXmlTest, DevicesOnARootPortOrTheHostBridgeHangOffTheCpu) {
  Host h;
  h.Nic("pci0000:36/0000:36:01.0/0000:37:00.0", "mlx5_1");
  h.Gpu("pci0000:00/0000:00:02.0");
  const XNode root = Xml(h.Build());
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].PciChildren(),
            (std::vector<std::string>{"0000:00:02.0", "0000:37:00.0"}));
}

// NCCL's walk takes two path components a level whatever they are: behind a PCIe-to-PCI
// bridge (three levels) the root port is the element, and a bus address with a longer
// domain (behind a VMD) ends the walk like a root complex.
TEST(NcclXmlTest, OddDepthsAndVmdDomainsFollowNccl) {
  Host h;
  h.Gpu("pci0000:00/0000:00:1c.0/0000:02:00.0/0000:03:00.0");
  h.Gpu(
      "pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:1d.0/10000:e1:00.0/10000:e2:00.0/"
      "10000:e3:00.0");
  const XNode root = Xml(h.Build());
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].PciChildren(),
            (std::vector<std::string>{"0000:00:1c.0", "10000:e3:00.0"}));
  EXPECT_EQ(root.children[0].children[0].PciChildren(), std::vector<std::string>{"0000:03:00.0"});
}

// ---------------------------------------------------------------------------------------
// Devices left out

// VFs (of a NIC or a GPU), NICs without an RDMA device and BMC consoles get no element; a
// VF's PF does.
TEST(NcclXmlTest, OnlyGpusAndRdmaPfs) {
  Host h;
  h.Nic("pci0000:00/0000:00:02.0/0000:03:00.0", "mlx5_0");
  h.Nic("pci0000:00/0000:00:02.0/0000:03:00.2", "mlx5_2", 0, "0000:03:00.0");
  h.Gpu("pci0000:00/0000:00:05.0/0000:07:00.4").physfn = "0000:07:00.0";
  h.Add("pci0000:00/0000:00:03.0/0000:05:00.0", kEthClass).vendor = "8086";
  h.Add("pci0000:00/0000:00:04.0/0000:06:00.0", 0x030000).vendor = "1a03";  // ASPEED VGA
  const XNode root = Xml(h.Build());
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].PciChildren(), std::vector<std::string>{"0000:03:00.0"});
}

// A host without a GPU or RDMA NIC is an empty system, whatever its CPU facts.
TEST(NcclXmlTest, NoDevicesIsAnEmptySystem) {
  Host h;
  h.snap().cpu_arch.clear();
  h.Add("pci0000:00/0000:00:03.0/0000:05:00.0", kEthClass);
  auto xml = FormatNcclXml(h.Build());
  ASSERT_TRUE(xml.ok()) << xml.status().ToString();
  EXPECT_EQ(*xml, "<system version=\"1\"/>\n");
}

// ---------------------------------------------------------------------------------------
// Attributes

// Two NUMA nodes: a cpu each, by numaid, with its cpumap and the x86 identity in NCCL's
// order; a NUMA node without devices has none.
TEST(NcclXmlTest, CpuPerNumaNode) {
  Host h;
  h.snap().numa_nodes.push_back({2, "ffff0000,00000000", "48-63"});
  h.Gpu(kSwitchGpu, 0);
  h.Nic("pci0000:97/0000:97:01.0/0000:98:00.0", "mlx5_1", 1);
  const XNode root = Xml(h.Build());
  ASSERT_EQ(root.children.size(), 2u);
  const XNode& cpu0 = root.children[0];
  EXPECT_EQ(cpu0.Keys(), (std::vector<std::string>{"numaid", "affinity", "arch", "vendor",
                                                   "familyid", "modelid"}));
  EXPECT_EQ(cpu0.Attr("numaid"), "0");
  EXPECT_EQ(cpu0.Attr("affinity"), "00000000,0000ffff");
  EXPECT_EQ(cpu0.Attr("arch"), "x86_64");
  EXPECT_EQ(cpu0.Attr("vendor"), "GenuineIntel");
  EXPECT_EQ(cpu0.Attr("familyid"), "6");
  EXPECT_EQ(cpu0.Attr("modelid"), "143");
  EXPECT_EQ(root.children[1].Attr("numaid"), "1");
  EXPECT_EQ(root.children[1].Attr("affinity"), "00000000,ffff0000");
  EXPECT_EQ(root.children[1].PciChildren(), std::vector<std::string>{"0000:98:00.0"});
}

// An unknown NUMA node is NCCL's own numaid -1, without affinity (NCCL has no cpumap for
// it either); a cpumap NCCL could not read back is left to NCCL.
TEST(NcclXmlTest, UnknownNumaAndUnreadableCpumap) {
  Host h;
  h.Gpu("pci0000:00/0000:00:01.0/0000:01:00.0", -1);
  h.Gpu("pci0000:80/0000:80:01.0/0000:81:00.0", 1);
  std::string big = "ffffffff";
  for (int i = 0; i < 31; ++i) big += ",ffffffff";  // 1024 CPUs: 287 characters
  h.snap().numa_nodes[1].cpumap = big;
  const XNode root = Xml(h.Build());
  ASSERT_EQ(root.children.size(), 2u);
  EXPECT_EQ(root.children[0].Keys(),
            (std::vector<std::string>{"numaid", "arch", "vendor", "familyid", "modelid"}));
  EXPECT_EQ(root.children[0].Attr("numaid"), "-1");
  EXPECT_EQ(root.children[1].Attr("numaid"), "1");
  EXPECT_FALSE(root.children[1].Has("affinity"));
}

// Off x86 NCCL reads only the arch, in its own names; the x86 family is written only below
// 15, where every NCCL version encodes it as /proc/cpuinfo does; a vendor string that is
// not cpuid's 12 characters is left to cpuid.
TEST(NcclXmlTest, CpuIdentityOnlyWhereNcclReadsItTheSameWay) {
  Host h;
  h.Gpu(kSwitchGpu);
  h.snap().cpu_arch = "aarch64";
  EXPECT_EQ(Xml(h.Build()).children.at(0).Keys(),
            (std::vector<std::string>{"numaid", "affinity", "arch"}));
  EXPECT_EQ(Xml(h.Build()).children.at(0).Attr("arch"), "arm64");
  h.snap().cpu_arch = "ppc64le";
  EXPECT_EQ(Xml(h.Build()).children.at(0).Attr("arch"), "ppc64");
  h.snap().cpu_arch = "x86_64";
  h.snap().cpu_vendor = "AuthenticAMD";
  h.snap().cpu_family = 25;
  h.snap().cpu_model = 17;
  EXPECT_EQ(Xml(h.Build()).children.at(0).Keys(),
            (std::vector<std::string>{"numaid", "affinity", "arch", "vendor"}));
  h.snap().cpu_vendor = "Shanghai";  // trimmed: cpuid's is "  Shanghai  "
  h.snap().cpu_family = 7;
  h.snap().cpu_model = 91;
  EXPECT_EQ(Xml(h.Build()).children.at(0).Keys(),
            (std::vector<std::string>{"numaid", "affinity", "arch", "familyid", "modelid"}));
}

// The arch is required: unknown (an old snapshot, a kernel without /proc/sys/kernel/arch)
// or not NCCL's, it is an error naming the file, not a guess.
TEST(NcclXmlTest, UnknownArchIsAnError) {
  Host h;
  h.Gpu(kSwitchGpu);
  h.snap().cpu_arch.clear();
  auto missing = FormatNcclXml(h.Build());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("/proc/sys/kernel/arch"));
  h.snap().cpu_arch = "s390x";
  auto unknown = FormatNcclXml(h.Build());
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("\"s390x\""));
}

// pci: busid, class, vendor and device as sysfs writes them, then NCCL's link values: the
// slower max_link_speed text and the narrower max_link_width of both ends of the link, only
// when both ends are known; never for a GPU, whose link NCCL (2.30.7 on) takes from NVML's
// current state, which a value in the file would override.
TEST(NcclXmlTest, PciAttributes) {
  Host h;
  PciFunction& gpu = h.Gpu(kSwitchGpu);
  gpu.max_link_speed = "32.0 GT/s PCIe";
  gpu.upstream_max_link_speed = "16.0 GT/s PCIe";
  gpu.max_link_width = 16;
  gpu.upstream_max_link_width = 8;
  gpu.current_link_width = 4;  // trained narrower: NCCL still uses max_*
  PciFunction& nic = h.Nic(kSwitchNic, "mlx5_0");
  nic.max_link_speed = "16 GT/s";
  nic.upstream_max_link_speed = "32.0 GT/s PCIe";
  nic.max_link_width = 16;  // upstream width unknown
  const XNode root = Xml(h.Build());
  const XNode* g = FindPci(root, "0000:18:00.0").first;
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->Keys(), (std::vector<std::string>{"busid", "class", "vendor", "device"}));
  EXPECT_EQ(g->Attr("vendor"), "0x10de");
  EXPECT_EQ(g->Attr("device"), "0x2330");
  const XNode* n = FindPci(root, "0000:19:00.0").first;
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->Attr("link_speed"), "16 GT/s");
  EXPECT_FALSE(n->Has("link_width"));
  nic.upstream_max_link_width = 8;
  const XNode with_width = Xml(h.Build());
  EXPECT_EQ(FindPci(with_width, "0000:19:00.0").first->Attr("link_width"), "8");
  // A bridge read without details: its class only.
  const XNode* sw = FindPci(root, "0000:16:00.0").first;
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(sw->Keys(), (std::vector<std::string>{"busid", "class"}));
}

// A bridge on a device's path missing from the snapshot has no class: an error.
TEST(NcclXmlTest, BridgeWithoutClassIsAnError) {
  Host h;
  h.Gpu(kSwitchGpu);
  h.Fn("0000:16:00.0").class_code = -1;
  auto xml = FormatNcclXml(h.Build());
  ASSERT_FALSE(xml.ok());
  EXPECT_THAT(xml.status().message(), HasSubstr("0000:16:00.0"));
}

// NCCL reads a value verbatim up to its quote, so no escape keeps it: a value with '"', '<'
// or '&' is refused, naming it; "'" and '>' are written as they are.
TEST(NcclXmlTest, ValuesNcclCannotReadBackAreRefused) {
  Host h;
  h.Gpu(kSwitchGpu);
  for (const char* bad : {"Genuine\"ntel", "Genuine<ntel", "Genuine&ntel", "Genuine\tntel"}) {
    h.snap().cpu_vendor = bad;
    auto xml = FormatNcclXml(h.Build());
    ASSERT_FALSE(xml.ok()) << bad;
    EXPECT_EQ(xml.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(xml.status().message(), HasSubstr("<cpu numaid=\"0\"> vendor"));
  }
  h.snap().cpu_vendor = "Genu'ne>ntel";
  EXPECT_EQ(Xml(h.Build()).children.at(0).Attr("vendor"), "Genu'ne>ntel");
}

// NCCL loads at most 256 nodes, its own gpu, nic and net nodes included: more is an error,
// not a file NCCL rejects. Each NIC here is a pci in the file, and a nic and a net of NCCL's.
TEST(NcclXmlTest, MoreNodesThanNcclLoadsIsAnError) {
  Host h;
  char path[64];
  for (int bus = 1; bus <= 84; ++bus) {
    std::snprintf(path, sizeof(path), "pci0000:00/0000:00:%02x.0/0000:%02x:00.0", bus % 32, bus);
    h.Nic(path, "mlx5_" + std::to_string(bus));
  }
  EXPECT_TRUE(FormatNcclXml(h.Build()).ok());  // system, cpu and 84 × (pci, nic, net)
  h.Nic("pci0000:00/0000:00:1f.0/0000:ff:00.0", "mlx5_255");
  auto xml = FormatNcclXml(h.Build());
  ASSERT_FALSE(xml.ok());
  EXPECT_THAT(xml.status().message(),
              HasSubstr("257 nodes (87 elements in the file, the rest the gpu, nic and net"));
}

// ---------------------------------------------------------------------------------------
// Canned hosts and the CLI

using testing::CannedHost;

class NcclXmlGoldenTest : public ::testing::TestWithParam<CannedHost> {};

std::string GoldenName(const CannedHost& h) { return std::string("topo_") + h.name + ".nccl.xml"; }

// The file of each canned snapshot is its golden file, and well-formed.
TEST_P(NcclXmlGoldenTest, Golden) {
  auto xml = FormatNcclXml(testing::LoadCanned(GetParam().name));
  ASSERT_TRUE(xml.ok()) << xml.status().ToString();
  XNode root;
  EXPECT_TRUE(LayoutReader(*xml).Read(&root)) << *xml;
  testing::ExpectGolden(GoldenName(GetParam()), *xml);
}

// `hcashare topo --format nccl-xml` prints it from --snapshot FILE, and from --host-root on
// the snapshot's fixture tree.
TEST_P(NcclXmlGoldenTest, Cli) {
  TempDir tmp;
  const std::string want = testing::ReadTextFile(testing::GoldenPath(GoldenName(GetParam())));
  auto snap = testing::RunHcashare(tmp, {"topo", "--format", "nccl-xml", "--snapshot",
                                         testing::CannedSnapshotPath(GetParam().name)});
  EXPECT_EQ(snap.code, 0) << snap.output;
  EXPECT_EQ(snap.output, want);
  const std::string root = tmp.path() + "/host";
  fake::SimNode node(root);
  ASSERT_TRUE(GetParam().build(&node).ok());
  auto live = testing::RunHcashare(tmp, {"topo", "--format", "nccl-xml", "--host-root", root});
  EXPECT_EQ(live.code, 0) << live.output;
  EXPECT_EQ(live.output, want);
}

INSTANTIATE_TEST_SUITE_P(Hosts, NcclXmlGoldenTest, ::testing::ValuesIn(testing::CannedHosts()),
                         [](const auto& info) { return std::string(info.param.name); });

// The help names the format; an unreadable host is exit 1 naming what could not be read.
TEST(NcclXmlCliTest, HelpAndErrors) {
  TempDir tmp;
  auto help = testing::RunHcashare(tmp, {"topo", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.output, HasSubstr("nccl-xml"));
  auto empty =
      testing::RunHcashare(tmp, {"topo", "--format", "nccl-xml", "--host-root", tmp.path()});
  EXPECT_EQ(empty.code, 1) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("/sys/bus/pci/devices"));
}

}  // namespace
}  // namespace hcashare::topo
