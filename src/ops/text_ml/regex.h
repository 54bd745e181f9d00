// Regular expressions for RegexFullMatch: RE2's syntax (the ONNX operator's), matched in
// time linear in the string and without recursion (a Thompson NFA run as a set of
// states), so a hostile pattern or string costs its length times the pattern's size,
// never a backtracking explosion or a stack overflow (std::regex recursed once per
// character: a 100 000-character string overflowed an 8 MiB stack, a few hundred the
// wasm build's).
//
// Supported: literals; `.` (any character but newline); classes `[...]` with ranges,
// negation and the escapes below; `\d \D \w \W \s \S` (ASCII, as RE2); `\b \B`; `^ $ \A
// \z` (text start and end: no multi-line mode); `\n \t \r \f \v \0` and `\xHH`,
// `\x{H...}`; any escaped punctuation; groups `( )`, `(?: )`, `(?P<name> )`; `|`;
// `* + ?` and `{n} {n,} {n,m}` (n, m <= 1000, RE2's limit), each optionally lazy (`?`:
// the same for a whole-string match). Not supported (kInvalidModel naming it): flags
// `(?i)`, `\p{...}` classes, POSIX `[:alpha:]` classes, `\C`. Matching is per Unicode
// code point of UTF-8 text (an invalid byte counts as one character), as RE2's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onemodel::impl::ops {

class Regex {
 public:
  // Compiles `pattern`; kInvalidModel ("pattern is not a valid regular expression: ...")
  // when it is not one this class supports, or compiles to over 100 000 states.
  explicit Regex(const std::string& pattern);
  // Whether the whole of `text` matches.
  bool FullMatch(const std::string& text) const;

  // One instruction of the compiled program.
  struct Inst {
    enum Op : uint8_t { kChar, kAny, kClass, kSplit, kJump, kAssert, kMatch } op;
    uint8_t assertion = 0;  // kAssert: one of the Assertion values
    int32_t x = 0, y = 0;   // kSplit: both targets; kJump: x; kClass: class index in x
    uint32_t c = 0;         // kChar: the code point
  };
  enum Assertion : uint8_t { kTextStart, kTextEnd, kWordBoundary, kNotWordBoundary };
  struct Range {
    uint32_t lo, hi;
  };
  struct Class {
    std::vector<Range> ranges;
    bool negated = false;
    bool Has(uint32_t c) const;
  };

 private:
  std::vector<Inst> prog_;
  std::vector<Class> classes_;
  friend class RegexCompiler;
};

}  // namespace onemodel::impl::ops
