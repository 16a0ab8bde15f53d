#include "common/netns.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.h"

namespace hcashare {
namespace {

constexpr const char* kThreadNetns = "/proc/thread-self/ns/net";

bool IsNetnsFd(int fd) { return ::ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWNET; }

}  // namespace

Result<Netns> Netns::Open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "open netns " + path);
  if (!IsNetnsFd(fd.get())) {
    return Status::InvalidArgument(path + " is not a network namespace");
  }
  return Netns(std::move(fd));
}

Result<Netns> Netns::Current() { return Open(kThreadNetns); }

bool Netns::SameAs(const Netns& other) const {
  struct stat a {};
  struct stat b {};
  return ::fstat(fd(), &a) == 0 && ::fstat(other.fd(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

uint64_t Netns::Inode() const {
  struct stat st {};
  return ::fstat(fd(), &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

NetnsGuard::NetnsGuard(const Netns& target) {
  Result<Netns> original = Netns::Current();
  if (!original.ok()) {
    status_ = original.status();
    return;
  }
  original_ = std::move(original).value();
  if (::setns(target.fd(), CLONE_NEWNET) != 0) {
    status_ = ErrnoStatus(errno, "setns");
    return;
  }
  entered_ = true;
}

NetnsGuard::~NetnsGuard() {
  if (entered_ && ::setns(original_.fd(), CLONE_NEWNET) != 0) {
    LogError("cannot return to the original network namespace; aborting",
             {{"error", std::strerror(errno)}});
    std::abort();
  }
}

bool IsNetnsPath(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  return fd.valid() && IsNetnsFd(fd.get());
}

}  // namespace hcashare
