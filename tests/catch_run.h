// Runs Catch2's session over the command line (tests/catch_impl.cpp, where Catch2's
// implementation is compiled): the test programs' main functions call it.
#pragma once

int RunCatchSession(int argc, char** argv);
