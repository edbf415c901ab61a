// core/files: input checks that never block, outputs that never overwrite inputs, all-or-nothing writes,
// write errors that are errors, and one writer per results file.
#include "core/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include "core/errors.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::TempDir;
using test::write_file;

// The message of the InputError / WriteError `f` throws ("" and a test failure when it throws none).
std::string input_error(const std::function<void()>& f) { return test::error_of<InputError>(f); }
std::string write_error(const std::function<void()>& f) { return test::error_of<WriteError>(f); }

using test::has;

// Forks a child that runs `body` and exits with what it returns (98 when it throws); returns the child's pid.
pid_t start_child(const std::function<int()>& body) {
  std::cout.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    ::_exit(code);
  }
  return pid;
}

// Waits for child `pid` to end: its exit code; -1 when a signal ended it.
int wait_child(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs `body` in a forked child and returns its exit status (the child's exit code; -1 on a signal).
int in_child(const std::function<int()>& body) { return wait_child(start_child(body)); }

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

// ---- inputs ------------------------------------------------------------------------------------------

TEST(InputFile, RegularFileWithinTheLimitPasses) {
  TempDir d;
  write_file(d.file("c.toml"), "x = 1\n");
  EXPECT_NO_THROW(check_input_file(d.file("c.toml"), "--config", 6));
  EXPECT_EQ(read_input_file(d.file("c.toml"), "--config", 6), "x = 1\n");
  fs::create_symlink(d.file("c.toml"), d.file("link.toml"));
  EXPECT_EQ(read_input_file(d.file("link.toml"), "--config", 100), "x = 1\n");
  write_file(d.file("empty"), "");
  EXPECT_EQ(read_input_file(d.file("empty"), "--trace", 0), "");
}

TEST(InputFile, MissingFileCannotBeRead) {
  TempDir d;
  const std::string e = input_error([&] { check_input_file(d.file("nope.toml"), "--config", 100); });
  EXPECT_TRUE(has(e, "--config " + d.file("nope.toml") + ": cannot read (No such file or directory)")) << e;
}

TEST(InputFile, DirectoryIsNotARegularFile) {
  TempDir d;
  const std::string e = input_error([&] { read_input_file(d.path(), "--trace", 100); });
  EXPECT_EQ(e, "--trace " + d.path() + ": not a regular file (a directory)");
}

TEST(InputFile, FifoIsRefusedWithoutBlocking) {
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("fifo").c_str(), 0600), 0);
  // No writer exists: a plain open for reading would block forever. The check must return at once.
  EXPECT_EQ(input_error([&] { check_input_file(d.file("fifo"), "--config", 100); }),
            "--config " + d.file("fifo") + ": not a regular file (a FIFO)");
  EXPECT_EQ(input_error([&] { read_input_file(d.file("fifo"), "--config", 100); }),
            "--config " + d.file("fifo") + ": not a regular file (a FIFO)");
  fs::create_symlink(d.file("fifo"), d.file("link"));
  EXPECT_TRUE(has(input_error([&] { read_input_file(d.file("link"), "--trace", 100); }), "(a FIFO)"));
}

TEST(InputFile, DeviceIsRefused) {
  EXPECT_EQ(input_error([] { read_input_file("/dev/null", "results", 100); }),
            "results /dev/null: not a regular file (a character device)");
  EXPECT_TRUE(has(input_error([] { read_input_file("/dev/zero", "--config", 100); }), "character device"));
}

TEST(InputFile, FileBeyondTheLimitIsRefusedBeforeReading) {
  TempDir d;
  write_file(d.file("big.csv"), std::string(101, 'x'));
  EXPECT_EQ(input_error([&] { check_input_file(d.file("big.csv"), "--trace", 100); }),
            "--trace " + d.file("big.csv") + ": larger than 100 bytes (101 bytes)");
  EXPECT_TRUE(has(input_error([&] { read_input_file(d.file("big.csv"), "--trace", 100); }), "larger than 100"));
  EXPECT_EQ(read_input_file(d.file("big.csv"), "--trace", 101).size(), 101u);
}

TEST(InputFile, UnreadableFileCannotBeRead) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  TempDir d;
  write_file(d.file("secret"), "x");
  ::chmod(d.file("secret").c_str(), 0);
  EXPECT_TRUE(has(input_error([&] { read_input_file(d.file("secret"), "--config", 100); }),
                  ": cannot read (Permission denied)"));
}

TEST(InputFile, NulBytesAreRefusedWithTheirLine) {
  TempDir d;
  write_file(d.file("nul.toml"), std::string("a = 1\nb = \"x\0y\"\n", 16));
  EXPECT_EQ(input_error([&] { read_input_file(d.file("nul.toml"), "--config", 100); }),
            "--config " + d.file("nul.toml") + " line 2: contains a NUL byte");
  EXPECT_EQ(read_input_file(d.file("nul.toml"), "--config", 100, NulBytes::allow).size(), 16u);
}

TEST(InputFile, NamesWithControlCharactersAreEscapedInMessages) {
  TempDir d;
  const std::string name = d.file("evil\n\x1b[31mname\x7f");
  const std::string e = input_error([&] { check_input_file(name, "--config", 100); });
  EXPECT_TRUE(has(e, "evil\\n\\x1b[31mname\\x7f: cannot read")) << e;
  EXPECT_FALSE(has(e, "\n"));
  EXPECT_EQ(printable("a\tb\rc\x01 é"), "a\\tb\\rc\\x01 é");
}

// ---- outputs never overwrite inputs --------------------------------------------------------------------

TEST(FileIdentity, SameFileByDeviceAndInode) {
  TempDir d;
  write_file(d.file("a"), "a");
  write_file(d.file("b"), "a");
  fs::create_hard_link(d.file("a"), d.file("hard"));
  fs::create_symlink(d.file("a"), d.file("soft"));
  ASSERT_TRUE(file_id(d.file("a")).has_value());
  EXPECT_EQ(file_id(d.file("a")), file_id(d.file("hard")));
  EXPECT_EQ(file_id(d.file("a")), file_id(d.file("soft")));
  EXPECT_EQ(file_id(d.file("a")), file_id(d.path() + "/./a"));
  EXPECT_NE(file_id(d.file("a")), file_id(d.file("b")));
  EXPECT_FALSE(file_id(d.file("missing")).has_value());
  fs::create_symlink(d.file("missing"), d.file("dangling"));
  EXPECT_FALSE(file_id(d.file("dangling")).has_value());
}

TEST(OutputNotAnInput, SameNameSymlinkAndHardLinkAreRefused) {
  TempDir d;
  write_file(d.file("c.toml"), "model = \"tiny\"\n");
  write_file(d.file("t.csv"), "request_id,prefix_len,extend_len\n");
  fs::create_hard_link(d.file("c.toml"), d.file("hard.toml"));
  fs::create_symlink(d.file("t.csv"), d.file("soft.csv"));
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"--config", d.file("c.toml")}, {"--trace", d.file("t.csv")}, {"--memory", ""}, {"RESULTS", "-"}};
  EXPECT_EQ(input_error([&] { check_not_an_input(d.file("c.toml"), "--out", inputs); }),
            "--out: '" + d.file("c.toml") + "' is the --config file");
  EXPECT_EQ(input_error([&] { check_not_an_input(d.file("hard.toml"), "--json", inputs); }),
            "--json: '" + d.file("hard.toml") + "' is the --config file ('" + d.file("c.toml") + "')");
  EXPECT_TRUE(has(input_error([&] { check_not_an_input(d.file("soft.csv"), "--out", inputs); }),
                  "is the --trace file"));
  // Nothing was touched.
  EXPECT_EQ(read_file(d.file("c.toml")), "model = \"tiny\"\n");
}

TEST(OutputNotAnInput, OtherFilesNewFilesAndStdoutPass) {
  TempDir d;
  write_file(d.file("c.toml"), "x");
  write_file(d.file("other.csv"), "x");  // same contents, another file
  const std::vector<std::pair<std::string, std::string>> inputs = {{"--config", d.file("c.toml")}};
  EXPECT_NO_THROW(check_not_an_input(d.file("other.csv"), "--out", inputs));
  EXPECT_NO_THROW(check_not_an_input(d.file("new.csv"), "--out", inputs));
  EXPECT_NO_THROW(check_not_an_input("-", "--out", inputs));
  EXPECT_NO_THROW(check_not_an_input("", "--out", inputs));
  EXPECT_NO_THROW(check_not_an_input(d.file("other.csv"), "--out", {}));
}

// ---- AtomicFile ---------------------------------------------------------------------------------------

TEST(AtomicFile, TargetChangesOnlyAtCommit) {
  TempDir d;
  write_file(d.file("r.json"), "old");
  {
    AtomicFile f(d.file("r.json"));
    EXPECT_EQ(fs::path(f.temp_path()).parent_path(), fs::path(d.path()));  // beside the target
    f.stream() << "new contents\n";
    f.stream().flush();
    EXPECT_EQ(read_file(d.file("r.json")), "old");  // not yet
    EXPECT_EQ(names_in(d.path()).size(), 2u);        // the target and the temporary file
    f.commit();
  }
  EXPECT_EQ(read_file(d.file("r.json")), "new contents\n");
  EXPECT_EQ(names_in(d.path()), std::vector<std::string>{"r.json"});
}

TEST(AtomicFile, NoCommitLeavesTheOldFileAndNoTemporary) {
  TempDir d;
  write_file(d.file("r.md"), "old");
  try {
    AtomicFile f(d.file("r.md"));
    f.stream() << "half a report";
    throw std::runtime_error("the report failed half way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read_file(d.file("r.md")), "old");
  EXPECT_EQ(names_in(d.path()), std::vector<std::string>{"r.md"});
  {
    AtomicFile f(d.file("new.md"));
    f.stream() << "x";
  }
  EXPECT_FALSE(fs::exists(d.file("new.md")));
  EXPECT_EQ(names_in(d.path()), std::vector<std::string>{"r.md"});
}

TEST(AtomicFile, LargeOutputArrivesWhole) {
  TempDir d;
  std::string big;
  for (int i = 0; i < 100000; ++i) big += std::to_string(i) + ",";
  AtomicFile f(d.file("big.csv"));
  f.stream() << big;
  f.commit();
  EXPECT_EQ(read_file(d.file("big.csv")), big);
  EXPECT_THROW(f.commit(), std::logic_error);
}

TEST(AtomicFile, MissingDirectoryIsAWriteError) {
  TempDir d;
  const std::string e = write_error([&] { AtomicFile f(d.file("no-such-dir/x.json")); });
  EXPECT_EQ(e, "cannot write '" + d.file("no-such-dir/x.json") + "': No such file or directory");
}

TEST(AtomicFile, DirectoryTargetIsAWriteError) {
  TempDir d;
  fs::create_directories(d.file("adir"));
  EXPECT_TRUE(has(write_error([&] { AtomicFile f(d.file("adir")); }), "Is a directory"));
  EXPECT_TRUE(fs::is_directory(d.file("adir")));
}

TEST(AtomicFile, DevFullIsAWriteErrorAtCommit) {
  AtomicFile f("/dev/full");
  EXPECT_EQ(f.temp_path(), "");  // a device is written in place, never renamed over
  f.stream() << "a report";
  EXPECT_EQ(write_error([&] { f.commit(); }), "cannot write '/dev/full': No space left on device");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AtomicFile, DevNullIsWrittenInPlace) {
  AtomicFile f("/dev/null");
  f.stream() << "discarded";
  EXPECT_NO_THROW(f.commit());
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AtomicFile, FailedWriteKeepsTheOldFileAndRemovesTheTemporary) {
  // A file-size limit makes write() fail with EFBIG part way, as a full disk fails it with ENOSPC.
  TempDir d;
  write_file(d.file("r.json"), "old");
  const int code = in_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit lim = {100, 100};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 10;
    AtomicFile f(d.file("r.json"));
    f.stream() << std::string(1000, 'x');
    try {
      f.commit();
    } catch (const WriteError& e) {
      return std::string(e.what()) == "cannot write '" + d.file("r.json") + "': File too large" ? 0 : 11;
    }
    return 12;
  });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(read_file(d.file("r.json")), "old");
  EXPECT_EQ(names_in(d.path()), std::vector<std::string>{"r.json"});
}

TEST(AtomicFile, SymlinkStaysALinkAndItsTargetIsReplaced) {
  TempDir d;
  fs::create_directories(d.file("real"));
  write_file(d.file("real/r.csv"), "old");
  fs::create_symlink(d.file("real/r.csv"), d.file("link.csv"));
  AtomicFile f(d.file("link.csv"));
  EXPECT_EQ(fs::path(f.temp_path()).parent_path(), fs::path(d.file("real")));
  f.stream() << "new";
  f.commit();
  EXPECT_TRUE(fs::is_symlink(d.file("link.csv")));
  EXPECT_EQ(read_file(d.file("real/r.csv")), "new");
}

TEST(AtomicFile, ModeOfTheReplacedFileIsKeptAndNewFilesFollowTheUmask) {
  TempDir d;
  write_file(d.file("r.md"), "old");
  ::chmod(d.file("r.md").c_str(), 0640);
  {
    AtomicFile f(d.file("r.md"));
    f.stream() << "new";
    f.commit();
  }
  struct stat st {};
  ASSERT_EQ(::stat(d.file("r.md").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  const mode_t old_mask = ::umask(022);
  {
    AtomicFile f(d.file("n.md"));
    f.stream() << "new";
    f.commit();
  }
  ::umask(old_mask);
  ASSERT_EQ(::stat(d.file("n.md").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

// ---- check_stream_written ---------------------------------------------------------------------------

TEST(StreamWritten, GoodStreamPassesAndAFailedStreamThrows) {
  std::ostringstream os;
  os << "fine";
  EXPECT_NO_THROW(check_stream_written(os, "the report"));
  os.setstate(std::ios::badbit);
  EXPECT_TRUE(has(write_error([&] { check_stream_written(os, "the report"); }), "cannot write the report"));
}

// stdout redirected to `fd_source` (or closed when it is empty) in a child; 0 when check_stream_written
// threw WriteError with `reason`.
int stdout_check_in_child(const std::string& target, const std::string& reason) {
  return in_child([&] {
    if (target.empty()) {
      ::close(1);
    } else {
      const int fd = ::open(target.c_str(), O_WRONLY);
      if (fd < 0 || ::dup2(fd, 1) < 0) return 10;
    }
    std::cout << "a table of results\n";
    try {
      check_stream_written(std::cout, "stdout");
    } catch (const WriteError& e) {
      return std::string(e.what()) == "cannot write stdout: " + reason ? 0 : 11;
    }
    return 12;
  });
}

TEST(StreamWritten, StdoutToDevFullIsAnError) {
  EXPECT_EQ(stdout_check_in_child("/dev/full", "No space left on device"), 0);
}

TEST(StreamWritten, ClosedStdoutIsAnError) { EXPECT_EQ(stdout_check_in_child("", "Bad file descriptor"), 0); }

TEST(StreamWritten, StdoutToDevNullPasses) {
  EXPECT_EQ(in_child([] {
              const int fd = ::open("/dev/null", O_WRONLY);
              ::dup2(fd, 1);
              std::cout << "x\n";
              check_stream_written(std::cout, "stdout");
              return 0;
            }),
            0);
}

// ---- FileLock -------------------------------------------------------------------------------------------

TEST(FileLock, HolderPidIsRecordedAndTheLockFileGoesAway) {
  TempDir d;
  {
    FileLock lock(d.file("run.csv"));
    EXPECT_EQ(lock.lock_path(), fs::weakly_canonical(d.file("run.csv")).string() + ".lock");
    EXPECT_EQ(read_file(lock.lock_path()), std::to_string(::getpid()) + "\n");
  }
  EXPECT_TRUE(fs::is_empty(d.path()));
}

TEST(FileLock, SecondLockIsRefusedNamingTheFileAndThePid) {
  TempDir d;
  FileLock first(d.file("run.csv"));
  EXPECT_EQ(input_error([&] { FileLock second(d.file("run.csv")); }),
            "--out " + d.file("run.csv") + ": another attnbench run (pid " + std::to_string(::getpid()) +
                ") is writing it");
  // Another name of the same file (a symlink) shares the lock.
  write_file(d.file("run.csv"), "");
  fs::create_symlink(d.file("run.csv"), d.file("alias.csv"));
  EXPECT_TRUE(has(input_error([&] { FileLock third(d.file("alias.csv"), "--json"); }),
                  "--json " + d.file("alias.csv") + ": another attnbench run"));
}

TEST(FileLock, LockHeldByAnotherProcess) {
  TempDir d;
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = start_child([&] {
    FileLock lock(d.file("run.csv"));
    char c = 'r';
    if (::write(ready[1], &c, 1) != 1) return 3;
    if (::read(release[0], &c, 1) != 1) return 4;
    return 0;
  });
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_EQ(input_error([&] { FileLock mine(d.file("run.csv")); }),
            "--out " + d.file("run.csv") + ": another attnbench run (pid " + std::to_string(child) +
                ") is writing it");
  ASSERT_EQ(::write(release[1], "x", 1), 1);
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_NO_THROW(FileLock mine(d.file("run.csv")));  // released
  for (int fd : {ready[0], ready[1], release[0], release[1]}) ::close(fd);
}

TEST(FileLock, KilledHolderDoesNotBlockTheNextRun) {
  TempDir d;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = start_child([&] {
    FileLock lock(d.file("run.csv"));
    char c = 'r';
    if (::write(ready[1], &c, 1) != 1) return 3;
    for (;;) ::pause();
  });
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_TRUE(has(input_error([&] { FileLock mine(d.file("run.csv")); }), "pid " + std::to_string(child)));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(fs::exists(d.file("run.csv.lock")));  // left behind by the killed run, but not locked
  FileLock mine(d.file("run.csv"));
  EXPECT_EQ(read_file(mine.lock_path()), std::to_string(::getpid()) + "\n");
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(FileLock, MissingDirectoryCannotBeLocked) {
  TempDir d;
  EXPECT_TRUE(has(input_error([&] { FileLock lock(d.file("nope/run.csv")); }),
                  "--out " + d.file("nope/run.csv") + ": cannot lock ("));
}

}  // namespace
}  // namespace attnbench
