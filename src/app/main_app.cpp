#include "app/main_app.hpp"

#include <iostream>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"

namespace attnbench {

int main_app(int argc, char** argv) {
  try {
    const ParsedCli cli = parse_cli(std::vector<std::string>(argv + 1, argv + argc));
    if (cli.exit_now) {
      (cli.exit_code == 0 ? std::cout : std::cerr) << cli.output;
      return cli.exit_code == 0 ? 0 : 2;
    }
    switch (cli.command) {
      case Command::memory:
        return run_memory_command(cli.memory, std::cout);
      case Command::list:
        return run_list_command(std::cout);
      case Command::env:
        return run_env_command(std::cout);
      case Command::run:
        return run_sweep_command(cli.run, cli.args, /*validate_only=*/false, std::cout);
      case Command::validate:
        return run_sweep_command(cli.run, cli.args, /*validate_only=*/true, std::cout);
      case Command::compare:
        return run_compare_command(cli.compare, std::cout);
      case Command::report:
        return run_report_command(cli.report, std::cout);
      case Command::none:
        break;
    }
    std::cerr << "attnbench: error: a subcommand is required (run, validate, memory, compare, report, list, env); try --help\n";
    return 2;
  } catch (const WriteError& e) {  // an output that did not reach its file or stdout: "cannot write ..."
    std::cerr << "attnbench: error: " << e.what() << "\n";
    return 1;
  } catch (const InputError& e) {
    std::cerr << "attnbench: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnbench: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace attnbench
