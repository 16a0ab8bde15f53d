// Running a program to completion with a given environment and stdin, collecting its
// stdout and stderr (the CNI exec protocol for delegated plugins such as IPAM).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare {

// What a finished program produced.
struct ExecOutput {
  int exit_code = 0;  // 128 + signal when it was killed by a signal
  // Peak resident set in KiB (wait4's ru_maxrss): the largest of the program's own (across
  // exec) and that of each descendant it waited for.
  long max_rss_kib = 0;
  std::string out;
  std::string err;
};

// Runs `path` with `argv` and exactly `env` ("K=V" entries), feeding it `input` on stdin.
// Kills it (SIGKILL) after `timeout`. Each output stream is capped at `max_output` bytes
// (more is an error). NotFound when `path` cannot be executed.
Result<ExecOutput> Execute(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const std::string& input,
                           std::chrono::milliseconds timeout, size_t max_output = 4 << 20);

}  // namespace hcashare
