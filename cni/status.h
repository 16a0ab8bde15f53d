// STATUS (spec 1.1.0): can the plugin serve ADD at all?
#pragma once

#include "cni/env.h"
#include "cni/netconf.h"
#include "common/status.h"

namespace hcashare::cni {

// OK when ADD can work: the state dir is writable; with `resourceName`, the kubelet's
// pod-resources socket (or its checkpoint file) is there and the socket accepts a
// connection; with `ipam`, its plugin is in CNI_PATH. Otherwise code 50 with the reason.
Status CmdStatus(const CniEnv& env, const NetConf& conf);

}  // namespace hcashare::cni
