// RegexFullMatch's matcher (see regex.h): a parser that keeps its own stack of open
// groups, a compiler to a Thompson program, and a simulation of the program's states
// over the text's code points.
#include "ops/text_ml/regex.h"

#include <algorithm>

#include "core/error.h"
#include "core/limits.h"

namespace onemodel::impl::ops {

namespace {

constexpr size_t kMaxProgram = 100000;  // instructions
constexpr int kMaxRepeat = 1000;        // RE2's limit on {n,m}
constexpr size_t kMaxDepth = 100;       // nested groups and repetitions (the compiler recurses this deep)
constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kInvalid = 0xFFFD;  // an invalid UTF-8 byte reads as U+FFFD, one character

[[noreturn]] void Bad(const std::string& why) {
  throw Error(ErrorCode::kInvalidModel, "pattern is not a valid regular expression: " + why);
}

// Decodes one UTF-8 character at s[i], advancing i (an invalid or cut-off sequence: one
// byte, read as U+FFFD).
uint32_t Decode(const std::string& s, size_t& i) {
  const uint8_t c = uint8_t(s[i]);
  if (c < 0x80) return ++i, c;
  const size_t n = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 0;
  if (n == 0 || s.size() - i <= n) return ++i, kInvalid;
  uint32_t cp = c & (0x3Fu >> n);
  for (size_t k = 1; k <= n; ++k) {
    const uint8_t b = uint8_t(s[i + k]);
    if ((b & 0xC0) != 0x80) return ++i, kInvalid;
    cp = (cp << 6) | (b & 0x3F);
  }
  i += n + 1;
  return cp > kMaxCodePoint ? kInvalid : cp;
}

bool IsWord(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

using CharRange = Regex::Range;
using Class = Regex::Class;

std::vector<CharRange> Complement(std::vector<CharRange> r) {
  std::sort(r.begin(), r.end(), [](const CharRange& a, const CharRange& b) { return a.lo < b.lo; });
  std::vector<CharRange> out;
  uint32_t next = 0;
  for (const CharRange& x : r) {
    if (x.lo > next) out.push_back({next, x.lo - 1});
    next = std::max(next, x.hi + 1);
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

// \d \w \s and their negations (ASCII, as RE2's Perl classes), or false.
bool PerlClass(char e, std::vector<CharRange>* out) {
  std::vector<CharRange> r;
  switch (e | 0x20) {
    case 'd': r = {{'0', '9'}}; break;
    case 'w': r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; break;
    case 's': r = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}}; break;
    default: return false;
  }
  if (e >= 'A' && e <= 'Z') r = Complement(r);
  out->insert(out->end(), r.begin(), r.end());
  return true;
}

}  // namespace

bool Regex::Class::Has(uint32_t c) const {
  bool in = false;
  for (const CharRange& r : ranges) in |= c >= r.lo && c <= r.hi;
  return in != negated;
}

// Parses a pattern into a tree (its own stack for open groups: no recursion), then
// compiles the tree (recursing at most kMaxDepth deep).
class RegexCompiler {
 public:
  RegexCompiler(const std::string& p, Regex* re) : p_(p), re_(re) {}

  void Run() {
    const int root = Parse();
    Emit(root);
    Add({Regex::Inst::kMatch});
  }

 private:
  struct Node {
    enum Kind { kChar, kAny, kClass, kAssert, kEmpty, kConcat, kAlt, kRepeat } kind = kEmpty;
    uint32_t c = 0;  // kChar: code point; kClass: class index; kAssert: assertion
    std::vector<int> kids;
    int min = 0, max = 0;  // kRepeat: max -1 for no bound
    size_t depth = 0;      // nesting below this node
  };
  struct Frame {
    std::vector<int> alts, cur;
  };

  int Make(Node n) {
    for (int k : n.kids) n.depth = std::max(n.depth, nodes_[size_t(k)].depth + 1);
    if (n.depth > kMaxDepth) Bad("nested more than " + std::to_string(kMaxDepth) + " deep");
    nodes_.push_back(std::move(n));
    return int(nodes_.size() - 1);
  }
  int Leaf(Node::Kind k, uint32_t c = 0) {
    Node n;
    n.kind = k;
    n.c = c;
    return Make(std::move(n));
  }
  int Seq(std::vector<int> items) {
    if (items.empty()) return Leaf(Node::kEmpty);
    if (items.size() == 1) return items[0];
    Node n;
    n.kind = Node::kConcat;
    n.kids = std::move(items);
    return Make(std::move(n));
  }
  int Close(Frame& f) {
    f.alts.push_back(Seq(std::move(f.cur)));
    if (f.alts.size() == 1) return f.alts[0];
    Node n;
    n.kind = Node::kAlt;
    n.kids = std::move(f.alts);
    return Make(std::move(n));
  }
  int NewClass(std::vector<CharRange> ranges, bool negated) {
    re_->classes_.push_back({std::move(ranges), negated});
    return Leaf(Node::kClass, uint32_t(re_->classes_.size() - 1));
  }

  int Parse() {
    std::vector<Frame> frames(1);
    bool last_repeat = false;  // the previous item was a repetition (RE2 refuses "a**")
    while (i_ < p_.size()) {
      Frame& f = frames.back();
      const char ch = p_[i_];
      if (ch == '(') {
        GroupPrefix();
        if (frames.size() > kMaxDepth) Bad("nested more than " + std::to_string(kMaxDepth) + " deep");
        frames.emplace_back();
        last_repeat = false;
        continue;
      }
      if (ch == ')') {
        if (frames.size() == 1) Bad("unexpected )");
        ++i_;
        const int g = Close(frames.back());
        frames.pop_back();
        frames.back().cur.push_back(g);
        last_repeat = false;
        continue;
      }
      if (ch == '|') {
        ++i_;
        f.alts.push_back(Seq(std::move(f.cur)));
        f.cur.clear();
        last_repeat = false;
        continue;
      }
      int min = 0, max = 0;
      if (Repetition(&min, &max)) {
        if (f.cur.empty()) Bad("missing argument to repetition operator");
        if (last_repeat) Bad("bad repetition operator");
        if (i_ < p_.size() && p_[i_] == '?') ++i_;  // lazy: the same for a whole-string match
        Node n;
        n.kind = Node::kRepeat;
        n.kids = {f.cur.back()};
        n.min = min;
        n.max = max;
        f.cur.back() = Make(std::move(n));
        last_repeat = true;
        continue;
      }
      f.cur.push_back(Atom());
      last_repeat = false;
    }
    if (frames.size() != 1) Bad("missing )");
    return Close(frames[0]);
  }

  // ( (?: (?P<name> : the group's opening, consumed.
  void GroupPrefix() {
    ++i_;
    if (i_ >= p_.size() || p_[i_] != '?') return;
    if (p_.compare(i_, 2, "?:") == 0) {
      i_ += 2;
      return;
    }
    if (p_.compare(i_, 3, "?P<") == 0 || p_.compare(i_, 2, "?<") == 0) {
      const size_t end = p_.find('>', i_);
      if (end == std::string::npos) Bad("invalid named capture group");
      i_ = end + 1;
      return;
    }
    Bad("flags and other (? groups are not supported");
  }

  // * + ? {n} {n,} {n,m} at i_ (consumed), else false; a '{' that is not one is a literal.
  bool Repetition(int* min, int* max) {
    const char ch = p_[i_];
    if (ch == '*' || ch == '+' || ch == '?') {
      ++i_;
      *min = ch == '+' ? 1 : 0;
      *max = ch == '?' ? 1 : -1;
      return true;
    }
    if (ch != '{') return false;
    size_t j = i_ + 1;
    auto number = [&](int* v) {
      const size_t s = j;
      int64_t n = 0;
      while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9' && j - s < 8) n = n * 10 + (p_[j++] - '0');
      *v = int(std::min<int64_t>(n, 1 << 30));
      return j > s;
    };
    int lo = 0, hi = 0;
    if (!number(&lo)) return false;
    hi = lo;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      if (!number(&hi)) hi = -1;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    if (lo > kMaxRepeat || hi > kMaxRepeat || (hi >= 0 && hi < lo)) Bad("bad repetition count");
    i_ = j + 1;
    *min = lo;
    *max = hi;
    return true;
  }

  int Atom() {
    const char ch = p_[i_];
    if (ch == '.') return ++i_, Leaf(Node::kAny);
    if (ch == '^') return ++i_, Leaf(Node::kAssert, Regex::kTextStart);
    if (ch == '$') return ++i_, Leaf(Node::kAssert, Regex::kTextEnd);
    if (ch == '[') return ParseClass();
    if (ch == '\\') {
      if (i_ + 1 >= p_.size()) Bad("trailing \\");
      const char e = p_[i_ + 1];
      std::vector<CharRange> r;
      if (PerlClass(e, &r)) return i_ += 2, NewClass(std::move(r), false);
      if (e == 'b' || e == 'B')
        return i_ += 2, Leaf(Node::kAssert, e == 'b' ? Regex::kWordBoundary : Regex::kNotWordBoundary);
      if (e == 'A') return i_ += 2, Leaf(Node::kAssert, Regex::kTextStart);
      if (e == 'z') return i_ += 2, Leaf(Node::kAssert, Regex::kTextEnd);
    }
    return Leaf(Node::kChar, Char());
  }

  // One character, escapes included (i_ at it; consumed).
  uint32_t Char() {
    if (p_[i_] != '\\') return Decode(p_, i_);
    if (i_ + 1 >= p_.size()) Bad("trailing \\");
    const char e = p_[i_ + 1];
    i_ += 2;
    switch (e) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'a': return 7;
      case '0': return 0;
      case 'x': return Hex();
      default: break;
    }
    const unsigned char u = static_cast<unsigned char>(e);
    if ((u >= '0' && u <= '9') || (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || u >= 0x80)
      Bad(std::string("escape \\") + e + " is not supported");
    return u;  // escaped punctuation
  }

  uint32_t Hex() {
    auto digit = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
      return -1;
    };
    uint32_t v = 0;
    if (i_ < p_.size() && p_[i_] == '{') {
      size_t n = 0;
      for (++i_; i_ < p_.size() && p_[i_] != '}'; ++i_, ++n) {
        if (digit(p_[i_]) < 0 || n >= 6) Bad("bad \\x{...} escape");
        v = v * 16 + uint32_t(digit(p_[i_]));
      }
      if (i_ >= p_.size() || n == 0) Bad("bad \\x{...} escape");
      ++i_;
    } else {
      for (int k = 0; k < 2; ++k, ++i_) {
        if (i_ >= p_.size() || digit(p_[i_]) < 0) Bad("bad \\x escape");
        v = v * 16 + uint32_t(digit(p_[i_]));
      }
    }
    if (v > kMaxCodePoint) Bad("bad \\x escape");
    return v;
  }

  int ParseClass() {
    ++i_;  // '['
    bool negated = false;
    if (i_ < p_.size() && p_[i_] == '^') negated = (++i_, true);
    std::vector<CharRange> r;
    bool first = true;
    while (true) {
      if (i_ >= p_.size()) Bad("missing ]");
      if (p_[i_] == ']' && !first) break;
      first = false;
      if (p_.compare(i_, 2, "[:") == 0) Bad("POSIX classes are not supported");
      if (p_[i_] == '\\' && i_ + 1 < p_.size() && PerlClass(p_[i_ + 1], &r)) {
        i_ += 2;
        continue;
      }
      const uint32_t lo = Char();
      uint32_t hi = lo;
      if (i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
        ++i_;
        hi = Char();
        if (hi < lo) Bad("bad character class range");
      }
      r.push_back({lo, hi});
    }
    ++i_;  // ']'
    return NewClass(std::move(r), negated);
  }

  int Add(Regex::Inst in) {
    if (re_->prog_.size() >= kMaxProgram) Bad("it compiles to over " + std::to_string(kMaxProgram) + " states");
    re_->prog_.push_back(in);
    return int(re_->prog_.size() - 1);
  }
  Regex::Inst& At(int pc) { return re_->prog_[size_t(pc)]; }
  int Here() const { return int(re_->prog_.size()); }

  void Emit(int id) {
    const Node& n = nodes_[size_t(id)];
    switch (n.kind) {
      case Node::kChar: Add({Regex::Inst::kChar, 0, 0, 0, n.c}); return;
      case Node::kAny: Add({Regex::Inst::kAny}); return;
      case Node::kClass: Add({Regex::Inst::kClass, 0, int32_t(n.c)}); return;
      case Node::kAssert: Add({Regex::Inst::kAssert, uint8_t(n.c)}); return;
      case Node::kEmpty: return;
      case Node::kConcat:
        for (int k : n.kids) Emit(k);
        return;
      case Node::kAlt: {
        std::vector<int> jumps;
        for (size_t k = 0; k + 1 < n.kids.size(); ++k) {
          const int split = Add({Regex::Inst::kSplit});
          At(split).x = Here();
          Emit(n.kids[k]);
          jumps.push_back(Add({Regex::Inst::kJump}));
          At(split).y = Here();
        }
        Emit(n.kids.back());
        for (int j : jumps) At(j).x = Here();
        return;
      }
      case Node::kRepeat: EmitRepeat(n.kids[0], n.min, n.max); return;
    }
  }

  void EmitRepeat(int kid, int min, int max) {
    for (int k = 0; k < min; ++k) Emit(kid);
    if (max < 0) {  // a star: L: split L1, end; L1: kid; jump L
      const int split = Add({Regex::Inst::kSplit});
      At(split).x = Here();
      Emit(kid);
      const int back = Add({Regex::Inst::kJump});
      At(back).x = split;
      At(split).y = Here();
      return;
    }
    std::vector<int> splits;  // max - min optional copies, each skipping to the end
    for (int k = min; k < max; ++k) {
      const int split = Add({Regex::Inst::kSplit});
      At(split).x = Here();
      splits.push_back(split);
      Emit(kid);
    }
    for (int s : splits) At(s).y = Here();
  }

  const std::string& p_;
  Regex* re_;
  size_t i_ = 0;
  std::vector<Node> nodes_;
};

Regex::Regex(const std::string& pattern) { RegexCompiler(pattern, this).Run(); }

bool Regex::FullMatch(const std::string& text) const {
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  for (size_t i = 0; i < text.size();) cps.push_back(Decode(text, i));
  const size_t n = prog_.size();
  // Two state lists (the program counters alive before and after a character) with
  // per-list stamps instead of clearing; `stack` replaces the closure's recursion.
  std::vector<int32_t> cur, next, stack;
  std::vector<uint64_t> stamp_cur(n, 0), stamp_next(n, 0);
  uint64_t gen = 0;
  auto closure = [&](std::vector<int32_t>& list, std::vector<uint64_t>& stamp, int32_t start, size_t pos) {
    const uint32_t none = 0xFFFFFFFFu;
    const uint32_t prev = pos > 0 ? cps[pos - 1] : none, nxt = pos < cps.size() ? cps[pos] : none;
    stack.assign(1, start);
    while (!stack.empty()) {
      const int32_t pc = stack.back();
      stack.pop_back();
      if (stamp[size_t(pc)] == gen) continue;
      stamp[size_t(pc)] = gen;
      const Inst& in = prog_[size_t(pc)];
      switch (in.op) {
        case Inst::kJump: stack.push_back(in.x); break;
        case Inst::kSplit:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Inst::kAssert: {
          const bool pw = prev != none && IsWord(prev), nw = nxt != none && IsWord(nxt);
          bool ok = false;
          switch (in.assertion) {
            case kTextStart: ok = pos == 0; break;
            case kTextEnd: ok = pos == cps.size(); break;
            case kWordBoundary: ok = pw != nw; break;
            default: ok = pw == nw; break;
          }
          if (ok) stack.push_back(pc + 1);
          break;
        }
        default: list.push_back(pc); break;  // consuming instructions and kMatch
      }
    }
  };
  const RunControl* control = ThreadRunControl();
  uint32_t& polls = ThreadPollCount();
  ++gen;
  closure(cur, stamp_cur, 0, 0);
  for (size_t pos = 0; pos < cps.size() && !cur.empty(); ++pos) {
    PollStop(control, polls);  // a long text under a large program stops with its run
    ++gen;
    next.clear();
    const uint32_t c = cps[pos];
    for (const int32_t pc : cur) {
      const Inst& in = prog_[size_t(pc)];
      const bool ok = (in.op == Inst::kChar && in.c == c) || (in.op == Inst::kAny && c != '\n') ||
                      (in.op == Inst::kClass && classes_[size_t(in.x)].Has(c));
      if (ok) closure(next, stamp_next, pc + 1, pos + 1);
    }
    std::swap(cur, next);
    std::swap(stamp_cur, stamp_next);
  }
  for (const int32_t pc : cur)
    if (prog_[size_t(pc)].op == Inst::kMatch) return true;
  return false;
}

}  // namespace onemodel::impl::ops
