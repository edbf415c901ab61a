// Where attnbench finds the files it ships beside the binary (configs/, configs/models/, scripts/): in a
// checkout, in the source folder; after `cmake --install`, in <prefix>/share/attnbench.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// The directory of the running executable (/proc/self/exe resolved); "" where it cannot be read.
std::string executable_dir();

// Where configs are looked for, in order (each a directory holding *.toml, existing or not):
//   $ATTNBENCH_DATA_DIR/configs alone when ATTNBENCH_DATA_DIR is set (and not empty): it overrides the rest;
//   otherwise ./configs (the working directory's, as in a checkout), then <exe_dir>/../share/attnbench/configs
//   (an installed binary: <prefix>/bin/attnbench), then the source folder's configs/ (baked in at build time).
std::vector<std::string> config_dir_candidates();

// The first existing directory of config_dir_candidates(); nullopt when none exists.
std::optional<std::string> config_dir();

}  // namespace attnbench
