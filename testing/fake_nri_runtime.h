// A container runtime's NRI side, for hcashare-nri's tests: it listens on a unix socket
// (or hands out one end of a socketpair, as a runtime starting a pre-installed plugin
// does), takes one plugin's registration on the Runtime service (connection 2), then calls
// the plugin's Plugin service (connection 1) as NRI's adaptation does: Configure,
// Synchronize (in chunks with `more`), and the pod events the plugin subscribed to, by
// dedicated RPC with StateChange as the fallback when the plugin answers Unimplemented, or
// by StateChange only (NRI before v0.12). A call unanswered within the request timeout
// drops the plugin (the connection is closed) and counts as no error, as the adaptation
// does. Single-threaded: the test's thread drives it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "nri/wire.h"

namespace hcashare::fake {

// A pod as the runtime describes it to plugins.
struct NriPod {
  std::string id, name, uid, namespace_name;
  std::string netns;  // "" for a host-network pod (no network namespace entry)
};

struct FakeNriRuntimeOptions {
  std::string runtime_name = "fake-nri";
  std::string runtime_version = "0.0";
  std::string config;  // Configure's config (a pre-installed plugin's conf.d file)
  std::chrono::milliseconds request_timeout{2000};
  std::chrono::milliseconds registration_timeout{5000};
  bool state_change_only = false;  // NRI before v0.12
  size_t sync_chunk = 0;           // pods per Synchronize message; 0: all in one
};

class FakeNriRuntime {
 public:
  FakeNriRuntime(std::string socket_path, FakeNriRuntimeOptions options);

  // Listens on the socket path.
  Status Listen();
  // A connected socketpair: the plugin's end (for NRI_PLUGIN_SOCKET; inheritable) is
  // returned, the other is this runtime's connection.
  Result<UniqueFd> PluginSocketPair();
  // Accepts a plugin within `timeout` (unless one is already connected), takes its
  // registration, configures it and synchronizes `pods`.
  Status AcceptPlugin(const std::vector<NriPod>& pods, std::chrono::milliseconds timeout);

  // The pod events. An error is the plugin's refusal; a dropped plugin (timeout, closed
  // connection) is no error, as in the adaptation.
  Status RunPodSandbox(const NriPod& pod);
  Status StopPodSandbox(const NriPod& pod);
  Status RemovePodSandbox(const NriPod& pod);

  // Closes the connection (the runtime restarts) and, when listening, keeps listening.
  void Disconnect();

  bool connected() const { return conn_.valid(); }
  const std::string& plugin_name() const { return plugin_name_; }
  const std::string& plugin_idx() const { return plugin_idx_; }
  int events() const { return events_; }
  // Every Plugin method called, in order ("StateChange" with its event: "StateChange/1").
  const std::vector<std::string>& calls() const { return calls_; }
  // Configure's refusal, when the plugin refused its configuration.
  const std::string& configure_error() const { return configure_error_; }

 private:
  struct Answer {
    int code = 0;
    std::string message;
    std::string payload;
  };
  Status PodEvent(int event, const std::string& method, const NriPod& pod);
  // Calls `method`; Unavailable when the plugin was dropped.
  Result<Answer> Call(const std::string& method, const std::string& payload);
  // Reads the connection until `want_stream` is answered (0: until registered).
  Result<Answer> Pump(uint32_t want_stream, std::chrono::steady_clock::time_point deadline);
  Status Send(const nri::Message& m);
  void Drop();

  std::string socket_path_;
  FakeNriRuntimeOptions options_;
  UniqueFd listener_, conn_;
  nri::TrunkReader reader_;
  uint32_t next_stream_ = 1;
  bool registered_ = false;
  std::string plugin_name_, plugin_idx_;
  int events_ = 0;
  std::vector<std::string> calls_;
  std::string configure_error_;
};

}  // namespace hcashare::fake
