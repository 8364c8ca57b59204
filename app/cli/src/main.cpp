// plansight: the command-line face of Plansight. The only place a status becomes an exit code.
#include <iostream>
#include <string>
#include <vector>

#include "plansight/cli/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return plansight::cli::exit_code(plansight::cli::run(args, std::cout, std::cerr));
  } catch (const std::exception& e) {
    std::cerr << "error: internal failure: " << e.what() << "\n";
    return 1;
  }
}
