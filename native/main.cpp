// The native command-line program: `onemodel COMMAND ...` (see src/cli/cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#endif

int main(int argc, char** argv) {
#if defined(_WIN32)
  // Bytes as written: the case and golden lines end in "\n" on every host, not "\r\n".
  _setmode(_fileno(stdout), _O_BINARY);
  _setmode(_fileno(stderr), _O_BINARY);
#endif
  std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = onemodel::cli::RunCli(args, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
