// Client side of the kubelet's v1beta1.Registration service (classic registration).
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"

namespace hcashare::dp {

// Calls Register on the kubelet socket `kubelet_socket` (an absolute path) for
// `resource_name`, announcing `endpoint` (our socket's file name in the same directory)
// and the options we serve. Waits at most `connect_timeout` for the connection and
// `call_timeout` for the call (the kubelet dials us back inside it).
// Unavailable when the kubelet is not there; the kubelet's error otherwise.
Status RegisterWithKubelet(const std::string& kubelet_socket, const std::string& endpoint,
                           const std::string& resource_name,
                           std::chrono::milliseconds connect_timeout,
                           std::chrono::milliseconds call_timeout);

}  // namespace hcashare::dp
