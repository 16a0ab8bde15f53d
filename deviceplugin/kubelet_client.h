// Client side of the kubelet's v1beta1.Registration service (classic registration).
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"

namespace hcashare::dp {

// Cancels one caller's Register calls from another thread: the call in flight returns at
// once, and every later call fails without dialling. Thread-safe.
class RegisterCancel {
 public:
  void Cancel();

 private:
  friend class KubeletRegistrar;
  // Records `ctx` as in flight; false when already cancelled.
  bool Begin(grpc::ClientContext* ctx);
  // Forgets the call in flight; false when it was cancelled meanwhile.
  bool End();

  std::mutex mu_;
  grpc::ClientContext* ctx_ = nullptr;  // guarded by mu_
  bool cancelled_ = false;              // guarded by mu_
};

// Registers resources on one kubelet.sock. Every resource shares one connection, which is
// re-created when kubelet.sock is replaced (a kubelet restart gives it a new inode), so a
// call never goes to a previous kubelet. Thread-safe.
class KubeletRegistrar {
 public:
  // `kubelet_socket` is the absolute path of kubelet.sock.
  explicit KubeletRegistrar(std::string kubelet_socket) : socket_(std::move(kubelet_socket)) {}

  // Calls Register for `resource_name`, announcing `endpoint` (our socket's file name in the
  // same directory) and the options we serve. Waits at most `connect_timeout` +
  // `call_timeout` (the kubelet dials us back inside the call). Unavailable when the
  // kubelet is not there; FailedPrecondition with the kubelet's message when it refuses.
  // `cancel` (may be null) lets a shutdown end the call at once (Unavailable).
  Status Register(const std::string& endpoint, const std::string& resource_name,
                  std::chrono::milliseconds connect_timeout, std::chrono::milliseconds call_timeout,
                  RegisterCancel* cancel = nullptr);

 private:
  // The channel for the current kubelet.sock inode, or null when the socket is absent.
  std::shared_ptr<grpc::Channel> Channel();

  const std::string socket_;
  std::mutex mu_;
  ino_t inode_ = 0;                         // guarded by mu_
  std::shared_ptr<grpc::Channel> channel_;  // guarded by mu_
};

}  // namespace hcashare::dp
