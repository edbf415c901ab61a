#include "app/main_app.hpp"

#include <csignal>
#include <iostream>

#include "app/cli.hpp"
#include "runner/inventory.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "report/shards.hpp"
#include "runner/backend_catalog.hpp"
#include "runner/memory_command.hpp"
#include "runner/sweep_command.hpp"

namespace attnbench {

namespace {

// Runs the command; for those whose results go to stdout, checks that every byte reached it (a closed stdout,
// a full disk behind a redirection, a closed pipe): WriteError otherwise.
int dispatch(const ParsedCli& cli) {
  int code = 2;
  switch (cli.command) {
    case Command::memory:
      code = run_memory_command(cli.memory, std::cout);
      break;
    case Command::list:
      write_inventory(std::cout);
      code = 0;
      break;
    case Command::env:
      write_environment_report(std::cout, cli.env.format);
      code = 0;
      break;
    case Command::run:
      code = run_sweep_command(cli.run, cli.args, /*validate_only=*/false, std::cout);
      break;
    case Command::validate:
      code = run_sweep_command(cli.run, cli.args, /*validate_only=*/true, std::cout);
      break;
    case Command::compare:
      return run_compare_command(cli.compare, std::cout, backend_catalog());
    case Command::report:
      return run_report_command(cli.report, std::cout, backend_catalog(), markdown_extras());
    case Command::merge:
      return run_merge_command(cli.merge, std::cout);
    case Command::none:
      throw InputError("a subcommand is required (" + subcommand_list() + "); try --help");
  }
  check_stream_written(std::cout, "stdout");
  return code;
}

}  // namespace

int main_app(int argc, char** argv) {
  // A closed pipe on stdout is a write error with a message (check_stream_written), not a silent death by
  // SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  use_checked_stdout();  // a failed write to stdout keeps its reason (ENOSPC, EBADF, EPIPE)
  // Every message is one line: text from the user (names, paths, keys) is echoed with control characters
  // escaped (printable), wherever it was quoted.
  const auto fail = [](const std::exception& e, int code) {
    std::cerr << "attnbench: error: " << printable(e.what()) << "\n";
    return code;
  };
  try {
    const ParsedCli cli = parse_cli(std::vector<std::string>(argv + 1, argv + argc));
    if (cli.exit_now) {
      (cli.exit_code == 0 ? std::cout : std::cerr) << cli.output;
      if (cli.exit_code == 0) check_stream_written(std::cout, "stdout");
      return cli.exit_code == 0 ? 0 : 2;
    }
    return dispatch(cli);
  } catch (const InputError& e) {
    return fail(e, 2);
  } catch (const WriteError& e) {  // an output that did not reach its file or stream
    return fail(e, 1);
  } catch (const std::exception& e) {
    return fail(e, 1);
  }
}

}  // namespace attnbench
