// GC: releasing the attachments the runtime no longer knows.
#pragma once

#include "cni/attach.h"

namespace hcashare::cni {

// GC: every attachment of this network (same `name`) in the state dir that is not in
// `cni.dev/valid-attachments` is deleted as DEL would (interface back to the host, IPAM
// released, PF-side settings reset, marker and state removed). Failures are logged and
// the first is returned after every attachment was tried.
Status CmdGc(const CniEnv& env, const NetConf& conf, const AttachContext& ctx);

}  // namespace hcashare::cni
