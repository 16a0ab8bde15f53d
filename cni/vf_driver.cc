#include "cni/vf_driver.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.h"

namespace hcashare::cni {
namespace {

// Writes `value` to the sysfs attribute at host path `path` in one write(2).
Status WriteAttribute(const Host& host, const std::string& path, const std::string& value) {
  UniqueFd fd(::open(host.Resolve(path).c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return ErrnoStatus(errno, "open " + path);
  ssize_t n;
  do {
    n = ::write(fd.get(), value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoStatus(errno, "write " + value + " to " + path);
  if (static_cast<size_t>(n) != value.size()) {
    return Status::IoError("short write of " + value + " to " + path);
  }
  return Status::Ok();
}

class SysfsVfDriver final : public VfDriver {
 public:
  explicit SysfsVfDriver(const Host& host) : host_(host) {}

  Status Rebind(const std::string& pci) override {
    auto link = host_.ReadLink("/sys/bus/pci/devices/" + pci + "/driver");
    if (!link.ok()) {
      return Status::FailedPrecondition(pci + " is bound to no driver: " + link.status().message());
    }
    const std::string dir = "/sys/bus/pci/drivers/" + BaseName(*link);
    RETURN_IF_ERROR(WriteAttribute(host_, dir + "/unbind", pci));
    Status bound = WriteAttribute(host_, dir + "/bind", pci);
    if (bound.ok()) return bound;
    if (WriteAttribute(host_, dir + "/bind", pci).ok()) return Status::Ok();
    return Status::IoError(pci + " is left unbound from " + BaseName(*link) +
                           ": cannot bind it again: " + bound.message());
  }

 private:
  const Host& host_;
};

}  // namespace

std::unique_ptr<VfDriver> NewSysfsVfDriver(const Host& host) {
  return std::make_unique<SysfsVfDriver>(host);
}

}  // namespace hcashare::cni
