// Delegating address management to the IPAM plugin named by `ipam.type`, with the CNI exec
// protocol: the plugin is found in CNI_PATH, gets the CNI_* environment and the network
// configuration on stdin, and answers with a result or an error on stdout.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cni/env.h"
#include "cni/result.h"
#include "common/status.h"

namespace hcashare::cni {

// How long an IPAM plugin may run.
inline constexpr std::chrono::milliseconds kIpamTimeout{30000};

// Runs plugin `type` with CNI_COMMAND `command` ("ADD", "DEL", "CHECK") and `netconf` on
// stdin. ADD returns the plugin's result; other commands return std::nullopt. A plugin
// missing from CNI_PATH -> code 7 (for DEL: a warning and success, as such a plugin holds
// nothing to release); a plugin error is passed on with its own code and the
// plugin named in msg; undecodable output -> code 6. A plugin that rejects the
// configuration's cniVersion (code 1) is asked for its versions (VERSION) and the call is
// repeated once with the newest version both sides support.
Result<std::optional<CniResult>> RunIpam(const CniEnv& env, const std::string& command,
                                         const nlohmann::json& netconf, const std::string& type);

}  // namespace hcashare::cni
