// A HostSnapshot as versioned JSON: what `hcashare snapshot` writes and `--snapshot FILE`
// loads. The form is {"kind": "hcashare-host-snapshot", "version": 1, ...the fields of
// HostSnapshot by their names in facts.h}; docs/snapshot.md lists them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "hostfacts/facts.h"

namespace hcashare::hostfacts {

// The value of "kind".
inline constexpr const char* kSnapshotKind = "hcashare-host-snapshot";
// The largest snapshot file loaded (a node with 4,096 VFs is ~5 MiB).
inline constexpr size_t kMaxSnapshotBytes = 64u << 20;

// The JSON form of `snap`.
nlohmann::ordered_json SnapshotToJson(const HostSnapshot& snap);

// Parses the JSON form. InvalidArgument naming the JSON path of the first problem: another
// kind or version, or a field of the wrong type. Keys it does not know are ignored.
Result<HostSnapshot> SnapshotFromJson(const nlohmann::json& j);

// Reads and parses snapshot file `path` (at most kMaxSnapshotBytes). NotFound when it cannot
// be read; InvalidArgument ("<path>: ...") when it is not a snapshot.
Result<HostSnapshot> LoadSnapshotFile(const std::string& path);

}  // namespace hcashare::hostfacts
