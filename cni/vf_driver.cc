#include "cni/vf_driver.h"

#include <unistd.h>

#include <cerrno>

#include "hostfacts/live.h"

namespace hcashare::cni {
namespace {

class SysfsVfDriver final : public VfDriver {
 public:
  explicit SysfsVfDriver(const Host& host) : live_(host) {}

  Result<std::string> BoundDriver(const std::string& pci) override {
    return live_.BoundDriver(pci);
  }

  Status Unbind(const std::string& pci, const std::string& driver) override {
    return Write(driver, "unbind", pci);
  }
  Status Bind(const std::string& pci, const std::string& driver) override {
    return Write(driver, "bind", pci);
  }

 private:
  // Writes `pci` to the driver's `control` file (hostfacts opens it, confined below the
  // host root), in one write(2).
  Status Write(const std::string& driver, const char* control, const std::string& pci) {
    if (!hostfacts::IsPciAddress(pci)) return Status::InvalidArgument("not a PCI address: " + pci);
    auto fd = live_.OpenDriverControl(driver, control);
    if (!fd.ok()) return fd.status();
    const std::string what = hostfacts::DriverControlPath(driver, control);
    ssize_t n;
    do {
      n = ::write(fd->get(), pci.data(), pci.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoStatus(errno, "write " + pci + " to " + what);
    if (static_cast<size_t>(n) != pci.size()) {
      return Status::IoError("short write of " + pci + " to " + what);
    }
    return Status::Ok();
  }

  const hostfacts::LiveFacts live_;
};

}  // namespace

bool IsPlainDriverName(const std::string& name) { return hostfacts::IsPlainDriverName(name); }

std::unique_ptr<VfDriver> NewSysfsVfDriver(const Host& host) {
  return std::make_unique<SysfsVfDriver>(host);
}

}  // namespace hcashare::cni
