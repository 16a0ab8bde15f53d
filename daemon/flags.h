// Command-line handling shared by the daemon and its tests.
#pragma once

#include <string>
#include <vector>

namespace hcashare::daemon {

// Rewrites Go-style single-dash long flags ("-config-file", "-config-file=x", "-version")
// into the double-dash form CLI11 parses, and an empty "--name=" into "--name" "" (CLI11
// would take the next argument as its value). Short flags ("-v") and values are left
// alone. `args` excludes argv[0].
std::vector<std::string> NormalizeLegacyFlags(const std::vector<std::string>& args);

// True when `args` (normalized) ask for JSON logs anywhere: "--log-format json" or
// "--log-format=json", before "--". Looked for before parsing, so that a command-line error
// (even in a flag ahead of it) is reported as JSON too.
bool WantsJsonLogs(const std::vector<std::string>& args);

}  // namespace hcashare::daemon
