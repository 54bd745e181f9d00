// RegexFullMatch's matcher (ops/text_ml/regex.h): RE2 syntax, whole-string matches, linear time,
// no recursion per character; every unsupported or oversized pattern a typed error.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "ops/text_ml/regex.h"

namespace onemodel::impl {
namespace test {
namespace {

bool Match(const std::string& pattern, const std::string& text) { return ops::Regex(pattern).FullMatch(text); }

// The message of the error compiling `pattern` ("" when it compiles).
std::string CompileError(const std::string& pattern) {
  try {
    ops::Regex r(pattern);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidModel);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("regex: RE2 syntax, whole-string matches", "[ops][regex]") {
  struct Case {
    const char* pattern;
    const char* text;
    bool match;
  };
  const std::vector<Case> cases = {
      {"abc", "abc", true},
      {"abc", "abcd", false},
      {"", "", true},
      {"a|", "", true},
      {"a|b|cd", "cd", true},
      {"a.c", "a\nc", false},
      {"a.c", "axc", true},
      {"a{2,3}", "a", false},
      {"a{2,3}", "aaa", true},
      {"a{2,3}", "aaaa", false},
      {"a{2}", "aa", true},
      {"a{2,}", "aaaaa", true},
      {"a{,2}", "a{,2}", true},  // not a repetition: literal braces, as RE2
      {"x*?y+?z??", "yy", true},
      {"(?:ab)+", "ababab", true},
      {"(?P<name>x)y", "xy", true},
      {"[^a-c]x", "dx", true},
      {"[^a-c]x", "bx", false},
      {"[]a]+", "]a]", true},
      {"[a-]+", "-a", true},
      {"[\\d.]+", "3.14", true},
      {"\\d+\\.\\d*", "12.", true},
      {"\\w+\\s\\W", "ab_9 !", true},
      {"\\S+", "a b", false},
      {"\\bfoo\\b", "foo", true},
      {"a\\Bb", "ab", true},
      {"a\\bb", "ab", false},
      {"^a$", "a", true},
      {"a$b", "ab", false},
      {"\\Aab\\z", "ab", true},
      {"\\x41\\x{42}", "AB", true},
      {"\\.\\*\\+", ".*+", true},
      {".{2}",
       "\xC3\xA9"
       "a",
       true},  // two code points (é, a)
      {"\xC3\xA9+", "\xC3\xA9\xC3\xA9", true},
      {"[\xC3\xA0-\xC3\xBF]", "\xC3\xA9", true},
      {".", "\xFF", true},  // an invalid byte is one character
      {"(a*)*b", "aaab", true},
      {"(a|ab)(c|bcd)(d*)", "abcd", true},
      {"www\\.[\\w.-]+\\.\\bcom\\b", "www.example.com", true},
      {"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@gmail.com", true},
      {"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@outlook.com", false},
  };
  for (const Case& c : cases) {
    INFO("pattern '" << c.pattern << "' text '" << c.text << "'");
    CHECK(Match(c.pattern, c.text) == c.match);
  }
}

TEST_CASE("regex: long texts and hostile patterns take linear time and no stack per character", "[ops][regex]") {
  // std::regex overflowed an 8 MiB stack on the first (100 000 characters) and took
  // exponential time on the second.
  CHECK(Match("(a|b)*", std::string(1000000, 'a')));
  CHECK_FALSE(Match("(a|a)*b", std::string(100000, 'a')));
  CHECK_FALSE(Match("(a*)*(a*)*(a*)*c", std::string(10000, 'a')));
  CHECK(Match("(x+x+)+y", std::string(5000, 'x') + "y"));
}

TEST_CASE("regex: unsupported and oversized patterns are kInvalidModel naming why", "[ops][regex]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"(", "missing )"},
      {"a)", "unexpected )"},
      {"*a", "missing argument"},
      {"a**", "bad repetition operator"},
      {"[a", "missing ]"},
      {"[z-a]", "bad character class range"},
      {"(?i)a", "flags"},
      {"\\p{L}", "escape \\p"},
      {"\\1", "escape \\1"},
      {"a{1001}", "bad repetition count"},
      {"a{3,2}", "bad repetition count"},
      {"[[:alpha:]]", "POSIX"},
      {"\\x{110000}", "bad \\x escape"},
      {"a\\", "trailing"},
      {std::string(101, '(') + "a" + std::string(101, ')'), "nested more than 100 deep"},
      {"(((a{1000}){1000}){1000})", "over 100000 states"},
  };
  for (const auto& [pattern, why] : bad) {
    INFO("pattern '" << pattern << "'");
    const std::string e = CompileError(pattern);
    CHECK(e.find("pattern is not a valid regular expression") != std::string::npos);
    CHECK(e.find(why) != std::string::npos);
  }
}

}  // namespace test
}  // namespace onemodel::impl
