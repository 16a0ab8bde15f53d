#include "cni/vf_driver.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "common/safe_file.h"
#include "common/unique_fd.h"

namespace hcashare::cni {
namespace {

// The address written to bind/unbind: a PCI address ("0000:7e:00.1"), nothing that could
// be read as another request.
bool IsPciAddress(const std::string& pci) {
  if (pci.empty() || pci.size() > 32) return false;
  for (char c : pci) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
  }
  return true;
}

class SysfsVfDriver final : public VfDriver {
 public:
  explicit SysfsVfDriver(const Host& host) : host_(host) {}

  Result<std::string> BoundDriver(const std::string& pci) override {
    if (!IsPciAddress(pci)) return Status::InvalidArgument("not a PCI address: " + pci);
    auto link = host_.ReadLink("/sys/bus/pci/devices/" + pci + "/driver");
    if (!link.ok()) {
      if (link.status().IsNotFound()) return std::string();
      return link.status();
    }
    std::string name = BaseName(*link);
    if (!IsPlainDriverName(name)) {
      return Status::InvalidArgument("the driver link of " + pci + " names \"" + name +
                                     "\", not a driver");
    }
    return name;
  }

  Status Unbind(const std::string& pci, const std::string& driver) override {
    return Write(driver, "unbind", pci);
  }
  Status Bind(const std::string& pci, const std::string& driver) override {
    return Write(driver, "bind", pci);
  }

 private:
  // Writes `pci` to drivers/<driver>/<attr> below <root>/sys/bus/pci, in one write(2).
  Status Write(const std::string& driver, const char* attr, const std::string& pci) {
    if (!IsPciAddress(pci)) return Status::InvalidArgument("not a PCI address: " + pci);
    if (!IsPlainDriverName(driver)) {
      return Status::InvalidArgument("not a driver name: \"" + driver + "\"");
    }
    const std::string path = "/sys/bus/pci/drivers/" + driver + "/" + attr;
    // Confined below the host root: a symlink on any component of sys/bus/pci/drivers/...
    // (the last one included) is refused, not followed.
    auto fd = OpenBeneath(host_.Resolve("/"), path.substr(1), O_WRONLY);
    if (!fd.ok()) return fd.status();
    ssize_t n;
    do {
      n = ::write(fd->get(), pci.data(), pci.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoStatus(errno, "write " + pci + " to " + path);
    if (static_cast<size_t>(n) != pci.size()) {
      return Status::IoError("short write of " + pci + " to " + path);
    }
    return Status::Ok();
  }

  const Host& host_;
};

}  // namespace

bool IsPlainDriverName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

std::unique_ptr<VfDriver> NewSysfsVfDriver(const Host& host) {
  return std::make_unique<SysfsVfDriver>(host);
}

}  // namespace hcashare::cni
