// Build identity for the environment fingerprint of every report.
#pragma once

#include <string>

namespace attnbench {

std::string version();     // "0.1.0"
std::string git_commit();  // short hash of the commit the binary was built from ("-dirty": with local changes)
std::string compiler();    // "GNU 12.2.0"

}  // namespace attnbench
