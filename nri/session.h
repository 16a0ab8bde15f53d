// One NRI plugin connection: registration with the runtime, then the runtime's calls of
// the plugin's Plugin service, answered one at a time in arrival order (the runtime sends
// pod events one at a time). Single-threaded; blocks in the caller's thread.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"

namespace hcashare::nri {

// The ttrpc service names on the wire.
inline constexpr char kPluginService[] = "nri.pkg.api.v1alpha1.Plugin";
inline constexpr char kRuntimeService[] = "nri.pkg.api.v1alpha1.Runtime";

// The gRPC status codes (as ttrpc carries them) the plugin answers with.
enum class RpcCode : int { kOk = 0, kUnknown = 2, kInvalidArgument = 3, kUnimplemented = 12 };

// The answer to one call: a payload when `code` is kOk, else `message`.
struct Reply {
  RpcCode code = RpcCode::kOk;
  std::string message;
  std::string payload;
};

// The Plugin service of a plugin.
class PluginService {
 public:
  virtual ~PluginService() = default;
  // Answers method `method` of the Plugin service with serialized `request`.
  virtual Reply Call(const std::string& method, const std::string& request) = 0;
  // Does one piece of the work an earlier call left for later (so that the call could be
  // answered within the runtime's timeout); called only while no call of the runtime is
  // waiting, so calls come first. True while more is left.
  virtual bool Background() { return false; }
};

// How RunSession registers.
struct SessionOptions {
  std::string plugin_name;  // checked by the runtime
  std::string plugin_idx;   // two digits: the plugin's order among the runtime's plugins
  std::string nri_version;  // told to the runtime at registration ("" for none)
  // The runtime must answer the registration within this.
  std::chrono::milliseconds registration_timeout{5000};
  // When readable, the session ends (Status::Ok). -1: none.
  int stop_fd = -1;
};

// Registers with the runtime over `trunk` (a connected stream socket; not closed here) and
// serves `service`, running its background work whenever no call is waiting, until the runtime
// closes the connection (Unavailable), a protocol error (InvalidArgument), a refused or late
// registration (FailedPrecondition), or `stop_fd` (Ok).
Status RunSession(int trunk, const SessionOptions& options, PluginService& service);

}  // namespace hcashare::nri
