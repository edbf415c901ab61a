// Entry point of the attnbench binary: parse, dispatch, map errors to exit codes (2 bad input, 1 failure).
#pragma once

namespace attnbench {

int main_app(int argc, char** argv);

}  // namespace attnbench
