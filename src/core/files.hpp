// Files in and out, done so that hostile inputs neither crash nor hang and outputs never destroy inputs:
//   - inputs are checked before they are read: a regular file, within a size limit, opened without blocking
//     (a FIFO with no writer would block a plain open forever);
//   - an output that resolves to an input (same file by device and inode: a symlink, a hard link, the same
//     name) is refused before anything is written;
//   - outputs are written to a temporary file beside the target and renamed into place only when every byte
//     reached the disk, so a failed write (disk full, /dev/full) leaves the old file whole and is an error;
//   - one writer per results file: an advisory lock held for the run's lifetime.
// POSIX only (Linux); no CUDA, no CLI11.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnbench {

// A write that did not reach its file or stream (disk full, a closed stdout, a failed rename). Not bad input:
// the app maps it to exit 1 with its message, "cannot write 'PATH': <reason>".
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `s` fit to echo in a one-line error message: control bytes (< 0x20, 0x7f) become \n, \t, \r or \xNN, so a
// hostile name cannot forge lines or terminal escapes. Other bytes (UTF-8 included) are kept.
std::string printable(std::string_view s);

// ---- inputs ------------------------------------------------------------------------------------------

// Whether read_input_file accepts NUL bytes in the contents (text formats do not).
enum class NulBytes { allow, reject };

// Checks, before any read, that `path` (symlinks followed) names a regular file of at most `max_bytes` bytes
// that this process can open for reading: stat, then open with O_NONBLOCK (a FIFO never blocks the open),
// then fstat of the opened descriptor (the file may have been swapped between stat and open).
// Throws InputError "<what> PATH: not a regular file (a FIFO)" (or a directory, a character device, a block
// device), "<what> PATH: larger than N bytes (M bytes)", or "<what> PATH: cannot read (<reason>)" (a socket:
// "cannot read (a socket, not a regular file)").
// `what` names the option or role, e.g. "--config" or "--trace".
void check_input_file(const std::string& path, const std::string& what, std::int64_t max_bytes);

// check_input_file, then the whole contents of `path` from the descriptor it checked (never more than
// max_bytes + 1 bytes are read: a file that grew beyond the limit meanwhile is refused, not truncated).
// With NulBytes::reject, a NUL byte is InputError "<what> PATH line N: contains a NUL byte".
std::string read_input_file(const std::string& path, const std::string& what, std::int64_t max_bytes,
                            NulBytes nul = NulBytes::reject);

// The deepest nesting of arrays / objects a JSON input may have (results, memory reports, model configs,
// shard case lists): real files nest a few levels; nlohmann's parser recurses once per level, so hostile text
// nested tens of thousands deep would overflow the stack instead of failing cleanly.
inline constexpr int kMaxJsonNesting = 64;

// Throws InputError "<label>: JSON nested deeper than MAX levels (at byte N)" when `text` opens more than
// `max_depth` arrays / objects inside each other (brackets inside strings do not count). Linear, no recursion:
// run it before handing hostile text to a recursive parser.
void check_json_nesting(std::string_view text, int max_depth, const std::string& label);

// ---- outputs never overwrite inputs --------------------------------------------------------------------

// A file's identity: what stat reports as st_dev and st_ino. Two paths name the same file exactly when their
// FileIds are equal (hard links, symlinks, "./x" vs "x" alike).
struct FileId {
  std::uint64_t dev = 0, ino = 0;
  bool operator==(const FileId&) const = default;
};

// The identity of the file `path` names, symlinks followed; nullopt when it does not exist (or cannot be
// stat'ed, e.g. a dangling symlink).
std::optional<FileId> file_id(const std::string& path);

// Refuses an output that is one of the inputs. `inputs` are (option, path) pairs, e.g. {"--config", "c.toml"};
// empty paths and "-" (stdin / stdout) are skipped, and so is an output that does not exist yet.
// Throws InputError "<option>: 'OUT' is the <input option> file" naming the first input it resolves to.
void check_not_an_input(const std::string& output, const std::string& option,
                        const std::vector<std::pair<std::string, std::string>>& inputs);

// ---- writing outputs ------------------------------------------------------------------------------------

// An output file written all or nothing. The bytes go to a temporary file in the target's directory (a unique
// name ".NAME.tmp-XXXXXX", so the rename stays on one file system); commit() flushes, checks the stream,
// fsyncs and renames it over the target. Until commit() the target is untouched; a failure at any step throws
// WriteError "cannot write 'PATH': <reason>" and removes the temporary file, and so does destruction without
// a commit (an exception unwinding past an unfinished report leaves the old report in place).
// The target's symlinks are followed (the file a symlink points to is replaced, the link stays). The new file
// gets the mode of the file it replaces, or 0666 less the umask for a new one (as an ofstream would).
// A target that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) cannot be renamed over: it
// is written in place (opening a FIFO waits for its reader, as a shell redirection does), and commit() still
// reports a failed write (e.g. /dev/full). A target that is a hard link of another name gets a new inode: the
// other name keeps the old contents (check_not_an_input refuses outputs that are inputs before this matters).
// Not for "-": write to std::cout and call check_stream_written.
class AtomicFile {
 public:
  // Creates the temporary file. Throws WriteError when it cannot be created (no such directory, no
  // permission, a read-only file system).
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Where to write the contents (binary mode: bytes go out as given).
  std::ostream& stream();
  // Publishes the contents (see the class comment). At most once; writing after it is a logic error.
  void commit();

  const std::string& path() const { return path_; }            // the target as given
  const std::string& temp_path() const { return temp_path_; }  // "" when written in place

 private:
  struct Impl;
  std::string path_, target_, temp_path_;
  Impl* impl_;
  bool committed_ = false;
  void fail(const std::string& reason);  // removes the temporary file, throws WriteError
};

// Where a command writes one document: the file `path` (all or nothing, through AtomicFile) or `stdout_stream`
// when `path` is "" or "-". The constructor refuses a path that is one of `inputs` (check_not_an_input: exit 2,
// before anything is read or written).
class OutputTarget {
 public:
  OutputTarget(const std::string& path, std::ostream& stdout_stream,
               const std::vector<std::pair<std::string, std::string>>& inputs, std::string option = "--out");
  ~OutputTarget();
  OutputTarget(const OutputTarget&) = delete;
  OutputTarget& operator=(const OutputTarget&) = delete;

  bool is_stdout() const { return path_.empty(); }
  const std::string& path() const { return path_; }
  // Opens the file at the first call (call it early to fail before any work, or after reading the inputs so
  // that a bad input is the error reported): InputError "<option>: cannot write 'PATH': <reason>" (exit 2)
  // when it cannot be created.
  std::ostream& stream();
  // Publishes the file, or checks that every byte reached stdout: WriteError (exit 1) when not.
  void finish();

 private:
  std::string path_, option_;
  std::ostream& stdout_;
  std::unique_ptr<AtomicFile> file_;
};

// Flushes `os` and throws WriteError "cannot write <what>: <reason>" when any write to it failed (badbit or
// failbit). For std::cout it also flushes C's stdout and checks ferror(stdout), which is where a closed
// stdout (EBADF), a full device (ENOSPC) or a closed pipe (EPIPE, with SIGPIPE ignored) shows. `what` names the
// output, e.g. "stdout" or "'report.md'".
void check_stream_written(std::ostream& os, const std::string& what);

// Makes std::cout write straight to file descriptor 1 through a buffer that remembers the errno of its first
// failed write, so that check_stream_written(std::cout, ...) names the reason (stdio forgets it between the
// failed write and the check: "a write failed"). Output then reaches fd 1 when std::cout is flushed (at the
// latest by check_stream_written or at exit). Call once, before anything is written to std::cout; the app's
// main does. A std::cout already redirected by the caller (rdbuf replaced, as tests capture it) is left alone.
void use_checked_stdout();

// ---- one writer per results file ------------------------------------------------------------------------

// An advisory, exclusive lock (flock) on "<results>.lock", beside the results file (symlinks of the results
// path resolved first, so two names of one file share one lock), held until destruction, when the lock file
// is removed. The holder's pid is written into the lock file for the message of the run that is refused.
// Why a separate lock file and not the results file itself: the results CSV is replaced by a rename during
// --resume and the JSON by AtomicFile, and a lock taken on the old inode would not stop a second run that
// opens the new one. The name "<results>.lock" does not change under renames.
// Throws InputError "<option> PATH: another attnbench run (pid N) is writing it" when another open lock
// (another process, or another FileLock in this one) holds it (another process: after waiting up to a second,
// for a holder that was just killed and is still closing its files), and InputError "<option> PATH: cannot lock
// (<reason>)" when the lock file cannot be created.
class FileLock {
 public:
  explicit FileLock(const std::string& results_path, const std::string& option = "--out");
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::string& lock_path() const { return lock_path_; }

 private:
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace attnbench
