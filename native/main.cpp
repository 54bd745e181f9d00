// The native command-line program: `onemodel COMMAND ...` (see src/cli/cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = onemodel::cli::RunCli(args, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
