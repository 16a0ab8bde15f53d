// ReadFileSafely (common/safe_file.h), the reader of files another party writes: each
// test puts in the reader's way what a writer of that directory could (a symlink, a FIFO,
// /dev/zero, a huge file, a directory) and checks it is refused at once, with the path and
// the reason in the error.
#include "common/safe_file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/temp_dir.h"
#include "tests/run_in_child.h"

namespace hcashare {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class SafeFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = tmp_.path() + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  static SafeReadOptions Cap(size_t bytes) {
    SafeReadOptions o;
    o.max_bytes = bytes;
    o.what = "pool description";
    return o;
  }

  TempDir tmp_{"hcashare-safefile-"};
};

TEST_F(SafeFileTest, ReadsARegularFile) {
  const std::string path = Write("a.json", "{\"x\": 1}\n");
  auto text = ReadFileSafely(path, Cap(1024));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "{\"x\": 1}\n");
  auto empty = ReadFileSafely(Write("empty", ""), Cap(0));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*empty, "");
}

TEST_F(SafeFileTest, AbsentIsNotFoundNamingThePath) {
  auto text = ReadFileSafely(tmp_.path() + "/nope.json", Cap(1024));
  ASSERT_FALSE(text.ok());
  EXPECT_TRUE(text.status().IsNotFound()) << text.status().ToString();
  EXPECT_THAT(text.status().message(), HasSubstr("pool description " + tmp_.path() + "/nope.json"));
}

// The writer of the directory swaps the file for a symlink to a file only root may read.
TEST_F(SafeFileTest, SymlinkAsTheFileIsRefused) {
  const std::string target = Write("secret", "root only");
  const std::string link = tmp_.path() + "/a.json";
  fs::create_symlink(target, link);
  auto text = ReadFileSafely(link, Cap(1024));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kPermissionDenied) << text.status().ToString();
  EXPECT_THAT(text.status().message(), HasSubstr(link + " is a symlink"));
}

// A symlink to /dev/zero: read whole, it took the root CNI to 266 MB. Refused unopened.
TEST_F(SafeFileTest, SymlinkToDevZeroIsRefused) {
  const std::string link = tmp_.path() + "/a.json";
  fs::create_symlink("/dev/zero", link);
  auto text = ReadFileSafely(link, Cap(4 << 20));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kPermissionDenied) << text.status().ToString();
}

// Where symlinks are followed (a ConfigMap), /dev/zero is still not a regular file.
TEST_F(SafeFileTest, FollowedSymlinkToDevZeroIsRefusedAsNotRegular) {
  const std::string link = tmp_.path() + "/config.json";
  fs::create_symlink("/dev/zero", link);
  SafeReadOptions o = Cap(4 << 20);
  o.follow_symlinks = true;
  auto text = ReadFileSafely(link, o);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(text.status().message(), HasSubstr("is a character device, not a regular file"));
}

// A ConfigMap's config.json: config.json -> ..data/config.json -> ..2024_01/config.json.
TEST_F(SafeFileTest, FollowSymlinksReadsAConfigMapLayout) {
  fs::create_directories(tmp_.path() + "/..2024_01");
  Write("..2024_01/config.json", "{}");
  fs::create_directory_symlink("..2024_01", tmp_.path() + "/..data");
  fs::create_symlink("..data/config.json", tmp_.path() + "/config.json");
  SafeReadOptions o = Cap(1024);
  o.follow_symlinks = true;
  auto text = ReadFileSafely(tmp_.path() + "/config.json", o);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "{}");
  EXPECT_FALSE(ReadFileSafely(tmp_.path() + "/config.json", Cap(1024)).ok());
}

// Below a trusted directory a symlinked directory on the way is refused too, by openat2
// and by the component walk used where the kernel has no openat2.
TEST_F(SafeFileTest, SymlinkBelowTheTrustedDirectoryIsRefused) {
  const std::string outside = tmp_.path() + "/outside";
  fs::create_directories(outside);
  Write("outside/a.json", "{}");
  const std::string trusted = tmp_.path() + "/trusted";
  fs::create_directories(trusted + "/real");
  Write("trusted/real/a.json", "{}");
  fs::create_directory_symlink(outside, trusted + "/sub");
  SafeReadOptions o = Cap(1024);
  o.beneath = trusted;
  auto good = ReadFileSafely(trusted + "/real/a.json", o);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  auto via_link = ReadFileSafely(trusted + "/sub/a.json", o);
  ASSERT_FALSE(via_link.ok());
  EXPECT_EQ(via_link.status().code(), StatusCode::kPermissionDenied)
      << via_link.status().ToString();
  EXPECT_THAT(via_link.status().message(), HasSubstr("below " + trusted));
  auto dotdot = ReadFileSafely(trusted + "/real/../../outside/a.json", o);
  ASSERT_FALSE(dotdot.ok());
  EXPECT_EQ(dotdot.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ReadFileSafely(outside + "/a.json", o).ok()) << "not below the trusted dir";

  auto walked = OpenBeneathByWalk(trusted, "real/a.json", O_RDONLY | O_CLOEXEC);
  EXPECT_TRUE(walked.ok()) << walked.status().ToString();
  auto walked_link = OpenBeneathByWalk(trusted, "sub/a.json", O_RDONLY | O_CLOEXEC);
  ASSERT_FALSE(walked_link.ok());
  EXPECT_EQ(walked_link.status().code(), StatusCode::kPermissionDenied)
      << walked_link.status().ToString();
  fs::create_symlink(trusted + "/real/a.json", trusted + "/last.json");
  auto walked_last = OpenBeneathByWalk(trusted, "last.json", O_RDONLY | O_CLOEXEC);
  ASSERT_FALSE(walked_last.ok());
  EXPECT_EQ(walked_last.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(OpenBeneathByWalk(trusted, "real/../real/a.json", O_RDONLY).status().code(),
            StatusCode::kInvalidArgument);
}

// Nobody ever writes to the FIFO: an open that waited for a writer would never return.
// The read runs in a child with a deadline, so that a regression fails the test instead of
// hanging it.
TEST_F(SafeFileTest, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = tmp_.path() + "/a.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto message = testing::RunInChild(
      [&] {
        auto text = ReadFileSafely(fifo, Cap(1024));
        return text.ok() ? std::string("read") : text.status().ToString();
      },
      std::chrono::seconds(10));
  ASSERT_TRUE(message.has_value()) << "the open of a FIFO blocked";
  EXPECT_THAT(*message, HasSubstr("failed precondition: pool description " + fifo +
                                  " is a FIFO, not a regular file"));
}

TEST_F(SafeFileTest, DirectoryIsRefused) {
  fs::create_directories(tmp_.path() + "/a.json");
  auto text = ReadFileSafely(tmp_.path() + "/a.json", Cap(1024));
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("is a directory, not a regular file"));
}

TEST_F(SafeFileTest, OversizeIsRefusedNamingTheCapAndTheCapItselfIsAccepted) {
  const std::string at_cap = Write("cap", std::string(4096, 'x'));
  auto ok = ReadFileSafely(at_cap, Cap(4096));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->size(), 4096u);
  const std::string over = Write("over", std::string(4097, 'x'));
  auto big = ReadFileSafely(over, Cap(4096));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(big.status().message(), HasSubstr(over + " is 4097 bytes; the limit is 4096 bytes"));
}

// A file whose fstat size says nothing (procfs reports 0) is still cut at the cap: the
// reader reads one byte past it, not the whole file.
TEST_F(SafeFileTest, SizeUnknownToFstatIsCutAtTheCap) {
  auto text = ReadFileSafely("/proc/self/maps", Cap(16));
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("the limit is 16 bytes"));
}

// A node file only the administrator may change: root's, writable by root only.
TEST_F(SafeFileTest, RootOwnedRefusesAFileOthersCanWrite) {
  const std::string path = Write("cni.json", "{}");
  SafeReadOptions o = Cap(1024);
  o.root_owned = true;
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
  auto group_writable = ReadFileSafely(path, o);
  ASSERT_FALSE(group_writable.ok());
  EXPECT_EQ(group_writable.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(group_writable.status().message(), HasSubstr("with mode 0664; it must be owned"));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to own and give away a file";
  auto ok = ReadFileSafely(path, o);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  auto nobodys = ReadFileSafely(path, o);
  ASSERT_FALSE(nobodys.ok());
  EXPECT_THAT(nobodys.status().message(), HasSubstr("is owned by uid 65534"));
}

TEST_F(SafeFileTest, FollowAndBeneathTogetherAreAnError) {
  SafeReadOptions o = Cap(1024);
  o.follow_symlinks = true;
  o.beneath = tmp_.path();
  EXPECT_EQ(ReadFileSafely(Write("a", "x"), o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hcashare
