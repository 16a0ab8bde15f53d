#include "testing/stuck_process.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hcashare::fake {
namespace {

std::string ReadSmall(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() > 4096) s.resize(4096);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

std::string ProcThreads(pid_t pid) {
  std::ostringstream out;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(task, ec)) {
    const std::string dir = e.path().string();
    out << "  tid " << e.path().filename().string() << " '" << ReadSmall(dir + "/comm")
        << "' state " << ThreadState(pid, std::stoi(e.path().filename().string())) << " wchan "
        << ReadSmall(dir + "/wchan") << "\n";
    const std::string stack = ReadSmall(dir + "/stack");  // root only
    if (!stack.empty()) {
      std::istringstream lines(stack);
      for (std::string l; std::getline(lines, l);) out << "      " << l << "\n";
    }
  }
  if (ec) out << "  cannot list " << task << ": " << ec.message() << "\n";
  return out.str();
}

std::string GdbStacks(pid_t pid) {
  const std::string gdb = "/usr/bin/gdb";
  if (::access(gdb.c_str(), X_OK) != 0) return "(no gdb: no user-space stacks)\n";
  auto r = Execute(
      gdb, {gdb, "-nx", "-batch", "-p", std::to_string(pid), "-ex", "thread apply all bt 40"},
      {"PATH=/usr/bin:/bin"}, "", std::chrono::milliseconds(60000), 1 << 20);
  if (!r.ok()) return "(gdb failed: " + r.status().ToString() + ")\n";
  return r->out + r->err;
}

}  // namespace

char ThreadState(pid_t pid, pid_t tid) {
  const std::string stat =
      ReadSmall("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and ')'
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

std::string DescribeStuckProcess(pid_t pid) {
  std::string out = "process " + std::to_string(pid) + " threads:\n" + ProcThreads(pid);
  out += "stacks:\n" + GdbStacks(pid);
  return out;
}

Result<int> SignalAndWait(Subprocess& p, int sig, std::chrono::milliseconds timeout) {
  RETURN_IF_ERROR(p.Signal(sig));
  auto rc = p.Wait(timeout);
  if (rc.ok()) return rc;
  std::string what = DescribeStuckProcess(p.pid());
  (void)p.Signal(SIGKILL);
  (void)p.Wait(std::chrono::milliseconds(10000));
  return Status::Unavailable("did not end within " + std::to_string(timeout.count()) +
                             " ms of signal " + std::to_string(sig) + "\n" + what);
}

}  // namespace hcashare::fake
