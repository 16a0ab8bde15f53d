// What a child process that did not end in time was doing, for a test's failure message: a
// rare hang in CI is otherwise a timeout and nothing else.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "common/process.h"

namespace hcashare::fake {

// The state letter ('R', 'S', 'D', ...) of thread `tid` of process `pid` from
// /proc/PID/task/TID/stat, or '?' when it cannot be read.
char ThreadState(pid_t pid, pid_t tid);

// Every thread of `pid`: its name, state and kernel wait channel, and its user-space stack
// when gdb is installed (scripts/install-deps.sh installs it). Never fails: what cannot be
// read is said in the text.
std::string DescribeStuckProcess(pid_t pid);

// Sends `sig` to `p` and waits up to `timeout` for its exit code. When it does not end in
// time: Unavailable with DescribeStuckProcess in the message, and `p` is SIGKILLed and
// reaped.
Result<int> SignalAndWait(Subprocess& p, int sig, std::chrono::milliseconds timeout);

}  // namespace hcashare::fake
