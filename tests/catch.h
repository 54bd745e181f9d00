// Catch2 2.x (Debian's catch2, single header) or 3.x (Homebrew, vcpkg): same macros.
#pragma once

#if __has_include(<catch2/catch.hpp>)
#include <catch2/catch.hpp>
#define ONEMODEL_CATCH2_V2 1
#else
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_macros.hpp>
#endif
