#include "testing/fake_verbs.h"

namespace hcashare::fake {

Result<std::vector<std::string>> FakeVerbs::ListDevices() {
  if (!load_.ok()) return load_;
  return devices_;
}

Result<std::vector<doctor::VerbsPort>> FakeVerbs::QueryPorts(const std::string& name) {
  if (!load_.ok()) return load_;
  auto it = ports_.find(name);
  if (it == ports_.end()) return Status::NotFound("no RDMA device " + name);
  return it->second;
}

void FakeVerbs::set_ports(const std::string& name, Result<std::vector<doctor::VerbsPort>> ports) {
  ports_.insert_or_assign(name, std::move(ports));
}

}  // namespace hcashare::fake
