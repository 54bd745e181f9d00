// Catch2's implementation (2.x: its single header with CATCH_CONFIG_RUNNER), compiled once
// per build for both test programs, whose main functions call RunCatchSession
// (tests/catch_run.h). CMakeLists.txt compiles this file at -O0 and without sanitizers:
// it is the harness, not code under test (6 s in the ASan build, where each program's
// runner file took 41 to 49 s; 12 s with g++ against 18 per program). Catch2 3.x ships its
// implementation as a library.
#include "catch_run.h"

#if __has_include(<catch2/catch.hpp>)
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#else
#include <catch2/catch_session.hpp>
#endif

int RunCatchSession(int argc, char** argv) { return Catch::Session().run(argc, argv); }
