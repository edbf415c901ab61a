#include "core/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <streambuf>

#include "core/errors.hpp"

namespace attnbench {

namespace fs = std::filesystem;

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

std::string reason(int err) { return std::strerror(err); }

// "a FIFO", "a directory", ... for a file that is not regular.
std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// The type and size checks of check_input_file on one stat result.
void check_stat(const struct stat& st, const std::string& label, std::int64_t max_bytes) {
  // A socket cannot be opened at all: said as such ("cannot read", like a file without permission).
  if (S_ISSOCK(st.st_mode)) throw InputError(label + ": cannot read (a socket, not a regular file)");
  if (!S_ISREG(st.st_mode)) throw InputError(label + ": not a regular file (" + kind_of(st.st_mode) + ")");
  if (static_cast<std::int64_t>(st.st_size) > max_bytes)
    throw InputError(label + ": larger than " + std::to_string(max_bytes) + " bytes (" +
                     std::to_string(static_cast<std::int64_t>(st.st_size)) + " bytes)");
}

// Opens `path` for reading after the checks; returns the descriptor (blocking mode restored). The caller
// closes it.
int open_checked(const std::string& path, const std::string& what, std::int64_t max_bytes) {
  const std::string label = what + " " + printable(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(label + ": cannot read (" + reason(errno) + ")");
  check_stat(st, label, max_bytes);
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw InputError(label + ": cannot read (" + reason(errno) + ")");
  try {
    if (::fstat(fd, &st) != 0) throw InputError(label + ": cannot read (" + reason(errno) + ")");
    check_stat(st, label, max_bytes);  // swapped for a FIFO or a bigger file between stat and open
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what, std::int64_t max_bytes) {
  ::close(open_checked(path, what, max_bytes));
}

std::string read_input_file(const std::string& path, const std::string& what, std::int64_t max_bytes,
                            NulBytes nul) {
  const int fd = open_checked(path, what, max_bytes);
  const std::string label = what + " " + printable(path);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(label + ": cannot read (" + reason(err) + ")");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (static_cast<std::int64_t>(text.size()) > max_bytes) {  // it grew after the fstat
      ::close(fd);
      throw InputError(label + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  if (nul == NulBytes::reject) {
    if (const auto pos = text.find('\0'); pos != std::string::npos) {
      const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n');
      throw InputError(label + " line " + std::to_string(line) + ": contains a NUL byte");
    }
  }
  return text;
}

// ---- outputs never overwrite inputs --------------------------------------------------------------------

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

void check_not_an_input(const std::string& output, const std::string& option,
                        const std::vector<std::pair<std::string, std::string>>& inputs) {
  if (output.empty() || output == "-") return;
  const std::optional<FileId> out = file_id(output);
  if (!out) return;  // a new file cannot be an input
  for (const auto& [input_option, input] : inputs) {
    if (input.empty() || input == "-") continue;
    if (file_id(input) == out)
      throw InputError(option + ": '" + printable(output) + "' is the " + input_option + " file" +
                       (input == output ? "" : " ('" + printable(input) + "')"));
  }
}

// ---- writing outputs ------------------------------------------------------------------------------------

namespace {

// A streambuf writing to a file descriptor, which remembers the errno of its first failed write (an ofstream
// loses it: by the time its failbit is seen, errno may have changed).
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return error_; }
  // Writes out what is buffered; false when a write failed (now or before).
  bool drain() {
    const char* p = pbase();
    while (p < pptr() && error_ == 0) {
      const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = errno;
      } else if (n == 0) {
        error_ = EIO;
      } else {
        p += n;
      }
    }
    setp(buf_, buf_ + sizeof buf_);
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  int fd_;
  int error_ = 0;
  char buf_[65536];
};

// The file a write to `path` lands in: symlinks resolved, so that the rename replaces the file, not the link.
std::string resolve_target(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::is_symlink(fs::symlink_status(p, ec))) return path;
  const fs::path c = fs::canonical(p, ec);
  if (!ec) return c.string();
  // A dangling symlink: the file it names will be created.
  const fs::path link = fs::read_symlink(p, ec);
  if (ec) return path;
  return (link.is_absolute() ? link : p.parent_path() / link).string();
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);  // reading the umask sets it: put it back at once
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

struct AtomicFile::Impl {
  int fd = -1;
  bool in_place = false;
  FdBuf buf;
  std::ostream os;
  explicit Impl(int fd_, bool in_place_) : fd(fd_), in_place(in_place_), buf(fd_), os(&buf) {}
};

AtomicFile::AtomicFile(const std::string& path) : path_(path), target_(resolve_target(path)), impl_(nullptr) {
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {  // /dev/null, /dev/stdout, a FIFO: written in place
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) throw WriteError("cannot write '" + printable(path_) + "': " + reason(errno));
    impl_ = new Impl(fd, true);
    return;
  }
  const fs::path target(target_);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::string name = target.filename().string();
  if (name.size() > 200) name.resize(200);  // the temporary name stays within NAME_MAX
  temp_path_ = (dir / ("." + name + ".tmp-XXXXXX")).string();
  const int fd = ::mkostemp(temp_path_.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    temp_path_.clear();
    throw WriteError("cannot write '" + printable(path_) + "': " + reason(err));
  }
  ::fchmod(fd, exists ? (st.st_mode & 07777) : new_file_mode());
  impl_ = new Impl(fd, false);
}

AtomicFile::~AtomicFile() {
  if (!impl_) return;
  if (impl_->fd >= 0) ::close(impl_->fd);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  delete impl_;
}

std::ostream& AtomicFile::stream() { return impl_->os; }

void AtomicFile::fail(const std::string& why) {
  if (impl_->fd >= 0) ::close(impl_->fd);
  impl_->fd = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  committed_ = true;  // nothing left to clean up
  throw WriteError("cannot write '" + printable(path_) + "': " + why);
}

void AtomicFile::commit() {
  if (committed_) throw std::logic_error("AtomicFile::commit called twice for '" + path_ + "'");
  impl_->os.flush();
  if (!impl_->buf.drain() || !impl_->os)
    fail(impl_->buf.error() ? reason(impl_->buf.error()) : "the stream failed");
  if (!impl_->in_place && ::fsync(impl_->fd) != 0) fail(reason(errno));
  const int fd = impl_->fd;
  impl_->fd = -1;
  if (::close(fd) != 0 && errno != EINTR) fail(reason(errno));
  if (!impl_->in_place) {
    if (::rename(temp_path_.c_str(), target_.c_str()) != 0) fail(reason(errno));
    // The rename itself reaches the disk with the directory (best effort: some file systems refuse).
    fs::path dir = fs::path(target_).parent_path();
    if (dir.empty()) dir = ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
  committed_ = true;
}

namespace {
std::streambuf* const g_initial_cout_buf = std::cout.rdbuf();  // <iostream> is initialised before this
FdBuf* g_stdout_buf = nullptr;  // set by use_checked_stdout(); never destroyed (std::cout outlives statics)
}  // namespace

void use_checked_stdout() {
  if (g_stdout_buf) return;
  if (std::cout.rdbuf() != g_initial_cout_buf) return;  // redirected by the caller (a test capturing it): kept
  std::cout.flush();
  std::fflush(stdout);
  g_stdout_buf = new FdBuf(1);
  std::cout.rdbuf(g_stdout_buf);
}

void check_stream_written(std::ostream& os, const std::string& what) {
  errno = 0;
  os.flush();
  int err = errno;
  bool failed = !os;
  if (g_stdout_buf && os.rdbuf() == g_stdout_buf && g_stdout_buf->error() != 0) {
    failed = true;
    err = g_stdout_buf->error();
  }
  if (os.rdbuf() == std::cout.rdbuf()) {
    errno = 0;
    if (std::fflush(stdout) != 0) {
      failed = true;
      err = errno;
    }
    if (std::ferror(stdout)) failed = true;
  }
  if (failed) throw WriteError("cannot write " + what + ": " + (err ? reason(err) : std::string("a write failed")));
}

// ---- one writer per results file ------------------------------------------------------------------------

namespace {

// The pid recorded in an open lock file ("" when none is there yet).
std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string s(buf, static_cast<std::size_t>(n));
  s.erase(std::find_if(s.begin(), s.end(), [](char c) { return c < '0' || c > '9'; }), s.end());
  return s;
}

}  // namespace

FileLock::FileLock(const std::string& results_path, const std::string& option) {
  std::error_code ec;
  // Symlinks resolved, dangling ones included (a link to a results file not written yet names that file).
  fs::path resolved = fs::weakly_canonical(fs::path(resolve_target(results_path)), ec);
  if (ec || resolved.empty()) resolved = results_path;
  lock_path_ = resolved.string() + ".lock";
  const std::string label = option + " " + printable(results_path);
  // A holder removes the lock file on release while it still holds the lock; a run that opened the removed
  // file before that finds, once it holds the lock, that the name now leads elsewhere (or nowhere) and tries
  // again. So whoever holds the lock on the file the name leads to is the only writer.
  const auto patience = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
    if (fd < 0) throw InputError(label + ": cannot lock (" + printable(lock_path_) + ": " + reason(errno) + ")");
    int rc;
    do {
      rc = ::flock(fd, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int err = errno;
      const std::string pid = err == EWOULDBLOCK ? holder_pid(fd) : "";
      ::close(fd);
      // A holder that was just killed may still be closing its files: wait a little for it (not for this
      // process, which would wait on itself).
      if (err == EWOULDBLOCK && pid != std::to_string(::getpid()) && std::chrono::steady_clock::now() < patience) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        --attempt;
        continue;
      }
      if (err == EWOULDBLOCK)
        throw InputError(label + ": another attnbench run (pid " + (pid.empty() ? "unknown" : pid) +
                         ") is writing it");
      throw InputError(label + ": cannot lock (" + printable(lock_path_) + ": " + reason(err) + ")");
    }
    struct stat held {}, named {};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      fd_ = fd;
      break;
    }
    ::close(fd);  // released and removed meanwhile: try the new file
  }
  if (fd_ < 0) throw InputError(label + ": cannot lock (" + printable(lock_path_) + " keeps changing)");
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid; a refused run then says "pid unknown".
  }
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still holding the lock (see the constructor)
  ::close(fd_);
}

OutputTarget::OutputTarget(const std::string& path, std::ostream& stdout_stream,
                           const std::vector<std::pair<std::string, std::string>>& inputs, std::string option)
    : path_(path == "-" ? std::string() : path), option_(std::move(option)), stdout_(stdout_stream) {
  if (!path_.empty()) check_not_an_input(path_, option_, inputs);
}

OutputTarget::~OutputTarget() = default;

std::ostream& OutputTarget::stream() {
  if (path_.empty()) return stdout_;
  if (!file_) {
    try {
      file_ = std::make_unique<AtomicFile>(path_);
    } catch (const WriteError& e) {  // nothing written yet: a path that cannot be written is bad input
      throw InputError(option_ + ": " + e.what());
    }
  }
  return file_->stream();
}

void OutputTarget::finish() {
  if (path_.empty()) {
    check_stream_written(stdout_, "stdout");
    return;
  }
  stream();  // opens it when nothing was written
  file_->commit();
}

void check_json_nesting(std::string_view text, int max_depth, const std::string& label) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw InputError(label + ": JSON nested deeper than " + std::to_string(max_depth) + " levels (at byte " +
                         std::to_string(i) + ")");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace attnbench
