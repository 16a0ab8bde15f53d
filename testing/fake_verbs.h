// FakeVerbs: a doctor::Verbs double for the doctor tests.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "doctor/verbs.h"

namespace hcashare::fake {

// A double with fixed answers.
class FakeVerbs final : public doctor::Verbs {
 public:
  FakeVerbs() = default;
  Status Load() override { return load_; }
  Result<std::vector<std::string>> ListDevices() override;
  Result<std::vector<doctor::VerbsPort>> QueryPorts(const std::string& name) override;

  void set_load(Status s) { load_ = std::move(s); }
  void set_devices(Result<std::vector<std::string>> d) { devices_ = std::move(d); }
  // The answer QueryPorts gives for `name`.
  void set_ports(const std::string& name, Result<std::vector<doctor::VerbsPort>> ports);

 private:
  Status load_;
  Result<std::vector<std::string>> devices_ = std::vector<std::string>{};
  std::map<std::string, Result<std::vector<doctor::VerbsPort>>> ports_;
};

}  // namespace hcashare::fake
