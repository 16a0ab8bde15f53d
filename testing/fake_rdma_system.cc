#include "testing/fake_rdma_system.h"

#include <sys/stat.h>

namespace hcashare::fake {
namespace {

// The nsfs inode of namespace `fd` (0 when unknown).
uint64_t NetnsInode(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

uint64_t CurrentNetnsInode() {
  struct stat st {};
  return ::stat("/proc/thread-self/ns/net", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

}  // namespace

Result<std::vector<RdmaDeviceRef>> FakeRdmaSystem::ListDevices() {
  std::vector<RdmaDeviceRef> out;
  const uint64_t here = CurrentNetnsInode();
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].second == here) out.push_back({static_cast<uint32_t>(i), devices_[i].first});
  }
  return out;
}

Status FakeRdmaSystem::MoveToNetns(const std::string& name, int netns_fd) {
  if (fail_countdown_ > 0 && --fail_countdown_ == 0) return fail_error_;
  const uint64_t here = CurrentNetnsInode();
  for (auto& [dev, ns] : devices_) {
    if (dev == name && ns == here) {
      ns = NetnsInode(netns_fd);
      moves_.push_back(name);
      return Status::Ok();
    }
  }
  return Status::NotFound("RDMA device " + name + " not visible here");
}

void FakeRdmaSystem::AddDevice(const std::string& name) {
  devices_.emplace_back(name, CurrentNetnsInode());
}

void FakeRdmaSystem::FailMove(int n, Status error) {
  fail_countdown_ = n;
  fail_error_ = std::move(error);
}

}  // namespace hcashare::fake
