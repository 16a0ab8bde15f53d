// Tests for common/atomic_file: atomic and durable writes, their modes, and what each step
// leaves behind when it fails. The order of flushes and renames is seen through
// testing/syscall_recorder.cc, a preload library that records (and can fail) the libc calls
// of a child process: this binary run again with one child test selected.
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/atomic_file.h"
#include "common/process.h"
#include "common/strings.h"
#include "common/temp_dir.h"
#include "interop/dra_checkpoint.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

// The files in `dir`, sorted.
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// What a child run printed and the calls it made, each as "<call> <what>" with the
// directory's path taken out ("fsync <dir>" is "fsync dir"; a temporary file is "tmp:<name>").
struct ChildRun {
  ExecOutput out;
  std::vector<std::string> calls;
};

// Runs child test `child` of this binary in `dir` under the recorder, failing as `fail`
// says (HCASHARE_SYSCALL_FAIL; "" for none).
ChildRun RunChild(const std::string& child, const std::string& dir, const std::string& fail) {
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::vector<std::string> env = {
      "HCASHARE_DURABLE_DIR=" + dir, "HCASHARE_SYSCALL_LOG=" + dir + ".log",
      std::string("LD_PRELOAD=") + HCASHARE_SYSCALL_RECORDER,
      // ASan wants its runtime first; the recorder, uninstrumented, comes before it.
      std::string("ASAN_OPTIONS=") + (asan ? std::string(asan) + ":" : "") +
          "verify_asan_link_order=0"};
  if (!fail.empty()) env.push_back("HCASHARE_SYSCALL_FAIL=" + fail);
  auto r = Execute(std::filesystem::read_symlink("/proc/self/exe").string(),
                   {"atomic_file_test", "--gtest_filter=AtomicFileChild." + child}, env, "",
                   std::chrono::seconds(60));
  ChildRun run;
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return run;
  run.out = *r;
  std::ifstream in(dir + ".log");
  for (std::string line; std::getline(in, line);) {
    std::string call = line.substr(0, line.find(' '));
    for (const std::string& path : SplitOn(line.substr(call.size() + 1), ' ')) {
      std::string name = path == dir ? "dir" : path.substr(path.rfind('/') + 1);
      if (path.rfind(dir + "/", 0) != 0 && path != dir) name = "outside:" + path;
      if (name.find(".tmp.") != std::string::npos)
        name = "tmp:" + name.substr(1, name.find(".tmp.") - 1);
      call += " " + name;
    }
    run.calls.push_back(call);
  }
  return run;
}

// The children: each does its work in HCASHARE_DURABLE_DIR and skips when run alone.
#define HCASHARE_CHILD_DIR()                                           \
  const char* dir_env = std::getenv("HCASHARE_DURABLE_DIR");           \
  if (dir_env == nullptr) GTEST_SKIP() << "a child of AtomicFileTest"; \
  const std::string dir(dir_env)

// Writes <dir>/plain atomically, <dir>/durable durably, then puts a claim in a DRA checkpoint.
TEST(AtomicFileChild, WritesEachKind) {
  HCASHARE_CHILD_DIR();
  ASSERT_TRUE(WriteFileAtomically(dir + "/plain", "p", 0600).ok());
  ASSERT_TRUE(WriteFileDurably(dir + "/durable", "d", 0600).ok());
  dra::Checkpoint cp(dir + "/checkpoint.json");
  dra::PreparedClaim claim;
  claim.uid = "uid-1";
  ASSERT_TRUE(cp.Put(claim).ok());
}

// Replaces <dir>/durable ("old") with "new" durably and prints the status; then puts a claim
// in a checkpoint holding none and prints the status and whether the claim is held.
TEST(AtomicFileChild, ReplacesAndPuts) {
  HCASHARE_CHILD_DIR();
  std::printf("write: %s\n", WriteFileDurably(dir + "/durable", "new", 0600).ToString().c_str());
  auto cp = dra::Checkpoint::Load(dir + "/checkpoint.json");
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  dra::PreparedClaim claim;
  claim.uid = "uid-2";
  std::printf("put: %s\n", cp->Put(claim).ToString().c_str());
  std::printf("held: %s\n", cp->Find("uid-2") ? "yes" : "no");
}

// Puts a second claim into the checkpoint (holding uid-1) and prints "put: <status>".
TEST(AtomicFileChild, PutsASecondClaim) {
  HCASHARE_CHILD_DIR();
  auto cp = dra::Checkpoint::Load(dir + "/checkpoint.json");
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  dra::PreparedClaim claim;
  claim.uid = "uid-2";
  std::printf("put: %s\n", cp->Put(claim).ToString().c_str());
}

// Issue 33: the DRA checkpoint was renamed into place without a flush, so a power cut could
// leave it empty. The temporary file is flushed, then renamed, then the directory is
// flushed; an atomic write alone flushes nothing; the checkpoint's write is a durable one.
TEST(AtomicFileTest, DurableWriteFlushesTheFileThenRenamesThenFlushesTheDirectory) {
  TempDir tmp;
  const ChildRun run = RunChild("WritesEachKind", tmp.path(), "");
  ASSERT_EQ(run.out.exit_code, 0) << run.out.out << run.out.err;
  EXPECT_EQ(run.calls, (std::vector<std::string>{
                           "rename tmp:plain plain", "fsync tmp:durable",
                           "rename tmp:durable durable", "fsync dir", "fsync tmp:checkpoint.json",
                           "rename tmp:checkpoint.json checkpoint.json", "fsync dir"}));
  EXPECT_EQ(testing::ReadTextFile(tmp.path() + "/durable"), "d");
}

// Each step of a durable write failing as the kernel fails it (EIO): the caller hears of
// it; before the rename the old file stays whole, after it the new one is in place (only
// its durability is in doubt); no temporary file is left; a checkpoint whose write failed
// does not hold the claim in memory either.
TEST(AtomicFileTest, EachFailingStepOfADurableWriteIsReportedAndLeavesNoDebris) {
  struct Case {
    std::string fail;
    std::string content;  // of "durable" after the write
  };
  for (const Case& c :
       std::vector<Case>{{"fsync:1", "old"}, {"rename:1", "old"}, {"fsync:2", "new"}}) {
    SCOPED_TRACE(c.fail);
    TempDir tmp;
    std::ofstream(tmp.path() + "/durable") << "old";
    const ChildRun run = RunChild("ReplacesAndPuts", tmp.path(), c.fail);
    ASSERT_EQ(run.out.exit_code, 0) << run.out.out << run.out.err;
    EXPECT_NE(run.out.out.find("write: "), std::string::npos) << run.out.out;
    EXPECT_EQ(run.out.out.find("write: OK"), std::string::npos)
        << "the failure is reported: " << run.out.out;
    EXPECT_NE(run.out.out.find("Input/output error"), std::string::npos) << run.out.out;
    EXPECT_EQ(testing::ReadTextFile(tmp.path() + "/durable"), c.content);
    // The checkpoint's own write, whose first step fails only when the fault comes later.
    EXPECT_NE(run.out.out.find("put: OK"), std::string::npos) << run.out.out;
    EXPECT_NE(run.out.out.find("held: yes"), std::string::npos) << run.out.out;
    EXPECT_EQ(Listing(tmp.path()), (std::vector<std::string>{"checkpoint.json", "durable"}));
  }
  // The checkpoint's write failing: Put says so and the claim is not held.
  for (const std::string fail : {"fsync:3", "rename:2", "fsync:4"}) {
    SCOPED_TRACE(fail);
    TempDir tmp;
    const ChildRun run = RunChild("ReplacesAndPuts", tmp.path(), fail);
    ASSERT_EQ(run.out.exit_code, 0) << run.out.out << run.out.err;
    EXPECT_NE(run.out.out.find("write: OK"), std::string::npos) << run.out.out;
    EXPECT_EQ(run.out.out.find("put: OK"), std::string::npos) << run.out.out;
    EXPECT_NE(run.out.out.find("cannot write the DRA checkpoint"), std::string::npos)
        << run.out.out;
    EXPECT_NE(run.out.out.find("held: no"), std::string::npos) << run.out.out;
    for (const std::string& name : Listing(tmp.path())) {
      EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
    }
  }
}

// kill -9 at every step of the checkpoint's write: the file is always whole, the old one
// until the rename and the new one from it on; at most the temporary file is left (the
// Preparer removes it at its next start, under its lock: dra_state_test).
TEST(AtomicFileTest, AKillAtEveryStepOfACheckpointWriteLeavesTheOldOrTheNewFile) {
  struct Case {
    std::string kill;
    bool has_new;
  };
  for (const Case& c : std::vector<Case>{{"fsync:1:kill", false},
                                         {"fsync:1:kill-after", false},
                                         {"rename:1:kill", false},
                                         {"rename:1:kill-after", true},
                                         {"fsync:2:kill", true},
                                         {"fsync:2:kill-after", true}}) {
    SCOPED_TRACE(c.kill);
    TempDir tmp;
    dra::Checkpoint first(tmp.path() + "/checkpoint.json");
    dra::PreparedClaim one;
    one.uid = "uid-1";
    ASSERT_TRUE(first.Put(one).ok());
    const ChildRun run = RunChild("PutsASecondClaim", tmp.path(), c.kill);
    EXPECT_EQ(run.out.exit_code, 128 + SIGKILL) << run.out.out << run.out.err;
    EXPECT_EQ(run.out.out.find("put: "), std::string::npos) << "killed before it returned";
    auto back = dra::Checkpoint::Load(tmp.path() + "/checkpoint.json");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_NE(back->Find("uid-1"), nullptr);
    EXPECT_EQ(back->Find("uid-2") != nullptr, c.has_new);
  }
}

// Files and directories get exactly the mode asked for, whatever the umask; existing
// directories keep theirs.
TEST(AtomicFileTest, ModesIgnoreTheUmask) {
  TempDir tmp;
  const mode_t old_umask = ::umask(0);  // the most permissive: 0600 must still be 0600
  const std::string dir = tmp.path() + "/a/b";
  ASSERT_TRUE(CreateDirectories(dir, 0700).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/f", "x", 0600).ok());
  ::umask(077);  // the most restrictive: 0644 must still be 0644
  ASSERT_TRUE(WriteFileAtomically(dir + "/g", "y").ok());
  ::umask(old_umask);
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat((dir + "/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::stat((dir + "/g").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat(tmp.path().c_str(), &st), 0);
  const mode_t before = st.st_mode & 07777;
  ASSERT_TRUE(CreateDirectories(tmp.path() + "/a/c", 0700).ok());
  ASSERT_EQ(::stat(tmp.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, before) << "an existing directory keeps its mode";
  EXPECT_FALSE(CreateDirectories(dir + "/f/x", 0700).ok()) << "a file in the way";
}

// Two instances writing the same file (a rollout overlap): identical content is adopted,
// not rewritten, so they never take turns replacing it; a file another instance replaced

}  // namespace
}  // namespace hcashare
