#include "core/data_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace attnbench {

namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return "";
  return exe.parent_path().string();
}

std::vector<std::string> config_dir_candidates() {
  if (const char* d = std::getenv("ATTNBENCH_DATA_DIR"); d && *d) return {(fs::path(d) / "configs").string()};
  std::vector<std::string> dirs = {"configs"};
  if (const std::string exe = executable_dir(); !exe.empty())
    dirs.push_back((fs::path(exe) / ATTNBENCH_DATA_FROM_BIN / "configs").lexically_normal().string());
  dirs.push_back(ATTNBENCH_SOURCE_DIR "/configs");
  return dirs;
}

std::optional<std::string> config_dir() {
  for (const std::string& d : config_dir_candidates()) {
    std::error_code ec;
    if (fs::is_directory(d, ec)) return d;
  }
  return std::nullopt;
}

}  // namespace attnbench
