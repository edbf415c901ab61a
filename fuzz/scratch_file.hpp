// What the fuzz targets share: scratch files that hold an input for a reader that takes a path.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace attnbench::fuzz {

// A new empty file under $TMPDIR (or /tmp) named after `name_template`, whose six X's before the suffix are
// replaced (mkstemps); aborts when it cannot be made.
inline std::string make_scratch(const std::string& name_template, int suffix_len) {
  std::string tmpl = (std::filesystem::temp_directory_path() / name_template).string();
  const int fd = ::mkstemps(tmpl.data(), suffix_len);
  if (fd < 0) {
    std::perror("fuzz: mkstemps");
    std::abort();
  }
  ::close(fd);
  return tmpl;
}

// Replaces the contents of `path` with `size` bytes of `data`; aborts on failure.
inline void write_file(const std::string& path, const void* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size)) std::abort();
  std::fclose(f);
}

// One scratch file per process, rewritten for every input and removed at exit.
class ScratchFile {
 public:
  ScratchFile(const std::string& name_template, int suffix_len) : path_(make_scratch(name_template, suffix_len)) {}
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    write_file(path_, data, size);
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace attnbench::fuzz
