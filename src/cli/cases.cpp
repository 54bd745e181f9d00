// `onemodel cases`: ONNX node-case folders (model.onnx, test_data_set_0/input_N.pb and
// output_N.pb), run and compared with their expected outputs; also the node cases of
// `onemodel golden`.
#include <cstring>
#include <iomanip>
#include <set>
#include <sstream>

#include "files.h"
#include "options.h"

namespace onemodel::cli {
namespace {

bool IsFloatType(ElementType t) {
  switch (t) {
    case ElementType::kFloat:
    case ElementType::kDouble:
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
    case ElementType::kFloat8E4M3FN:
    case ElementType::kFloat8E4M3FNUZ:
    case ElementType::kFloat8E5M2:
    case ElementType::kFloat8E5M2FNUZ:
    case ElementType::kFloat4E2M1:
    case ElementType::kFloat8E8M0: return true;
    default: return false;
  }
}

std::string CompareTensors(const Tensor& want, const Tensor& got, double rtol, double atol) {
  if (want.type() != got.type())
    return "type " + ElementTypeName(got.type()) + ", expected " + ElementTypeName(want.type());
  if (want.shape() != got.shape()) return "shape " + ShapeText(got.shape()) + ", expected " + ShapeText(want.shape());
  const int64_t n = want.size();
  if (want.type() == ElementType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (want.strings()[size_t(i)] != got.strings()[size_t(i)]) return "string " + std::to_string(i) + " differs";
    return "";
  }
  if (IsFloatType(want.type())) {
    for (int64_t i = 0; i < n; ++i) {
      const double w = want.ElementAsDouble(i), g = got.ElementAsDouble(i);
      if (w != w && g != g) continue;
      if (w == g) continue;
      const double diff = w > g ? w - g : g - w;
      const double aw = w < 0 ? -w : w;
      if (!(diff <= atol + rtol * aw)) {
        std::ostringstream s;
        s << "element " << i << ": got " << std::setprecision(9) << g << ", expected " << w;
        return s.str();
      }
    }
    return "";
  }
  if (want.byte_size() && std::memcmp(want.data(), got.data(), want.byte_size()) != 0) {
    const size_t es = ElementSize(want.type());
    for (int64_t i = 0; i < n; ++i) {
      if (std::memcmp(static_cast<const uint8_t*>(want.data()) + size_t(i) * es,
                      static_cast<const uint8_t*>(got.data()) + size_t(i) * es, es) != 0) {
        const double w = want.ElementAsDouble(i), g = got.ElementAsDouble(i), d = w > g ? w - g : g - w;
        if (want.type() != ElementType::kBool && d <= atol) continue;  // atol: a contrib case's `tolerance`
        return "element " + std::to_string(i) + " differs";
      }
    }
  }
  return "";
}

enum class CaseResult { kPassed, kFailed, kSkipped };

// Runs one case folder; returns the result, the line's hash and a reason.
CaseResult RunCase(const std::string& dir, const Options& o, std::string* hash, std::string* why, std::ostream& err) {
  *hash = GoldenSkipMarker();
  try {
    Session s = LoadSession(o, JoinPath(dir, "model.onnx"), err);
    const std::string data = JoinPath(dir, "test_data_set_0");
    // ONNX's tolerances, or the case's own (a `tolerance` file: "rtol atol"; the cases of
    // tools/contrib_cases.sh, whose expected outputs are ONNX Runtime's).
    double rtol = 1e-3, atol = 1e-7;
    if (FileExists(JoinPath(dir, "tolerance"))) {
      const std::vector<uint8_t> t = ReadFile(JoinPath(dir, "tolerance"));
      std::istringstream in(std::string(t.begin(), t.end()));
      if (!(in >> rtol >> atol) || !(rtol >= 0) || !(atol >= 0))
        throw Error(ErrorCode::kInvalidArgument, "cases: " + dir + "/tolerance must hold \"rtol atol\"");
    }
    std::vector<NamedValue> feeds;
    auto read_value = [&](const std::string& p, const ValueInfo& type) -> Value {
      const std::vector<uint8_t> bytes = ReadFile(p);
      return ReadOnnxValue(bytes.data(), bytes.size(), type.kind, p);
    };
    for (size_t i = 0;; ++i) {
      const std::string p = JoinPath(data, "input_" + std::to_string(i) + ".pb");
      if (!FileExists(p)) break;
      if (i >= s.inputs().size()) throw Error(ErrorCode::kInvalidModel, "more input files than model inputs");
      feeds.push_back({s.inputs()[i].name, read_value(p, s.inputs()[i])});
    }
    const std::vector<NamedValue> outs = RunSession(s, feeds, err);
    // Static inference, given the inputs' concrete types, must agree with what ran.
    const std::vector<ValueInfo> inferred = s.InferOutputs(feeds);
    for (size_t i = 0; i < outs.size(); ++i) {
      const ValueInfo& tt = inferred[i];
      if (tt.kind != ValueInfo::Kind::kTensor || !outs[i].value.is_tensor()) continue;
      const Tensor& got = outs[i].value.tensor();
      bool ok = tt.type == ElementType::kUndefined || tt.type == got.type();
      if (tt.has_shape) {
        ok = ok && tt.shape.size() == got.shape().size();
        for (size_t k = 0; ok && k < tt.shape.size(); ++k) ok = tt.shape[k] < 0 || tt.shape[k] == got.shape()[k];
      }
      if (!ok) {
        *why = "static inference says output " + std::to_string(i) + " is " + ElementTypeName(tt.type) + " " +
               ShapeText(tt.shape) + ", the run gave " + ElementTypeName(got.type()) + " " + ShapeText(got.shape());
        return CaseResult::kFailed;
      }
    }
    *hash = GoldenHash(outs);
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string p = JoinPath(data, "output_" + std::to_string(i) + ".pb");
      if (!FileExists(p)) {
        *why = "expected output " + std::to_string(i) + " is missing";
        return CaseResult::kFailed;
      }
      const Value want = read_value(p, s.outputs()[i]);
      const Value& got = outs[i].value;
      std::string d;
      if (want.kind() != got.kind()) {
        d = "kind of value differs (sequence, optional or tensor)";
      } else if (want.kind() == Value::Kind::kTensor) {
        d = CompareTensors(want.tensor(), got.tensor(), rtol, atol);
      } else if (want.kind() == Value::Kind::kSequence) {
        if (want.sequence().size() != got.sequence().size()) d = "sequence length differs";
        for (size_t k = 0; d.empty() && k < want.sequence().size(); ++k) {
          d = CompareTensors(want.sequence()[k], got.sequence()[k], rtol, atol);
          if (!d.empty()) d = "sequence element " + std::to_string(k) + ": " + d;
        }
      }
      if (!d.empty()) {
        *why = "output " + std::to_string(i) + ": " + d;
        return CaseResult::kFailed;
      }
    }
    return CaseResult::kPassed;
  } catch (const Error& e) {
    *hash = GoldenSkipMarker();
    *why = e.what();
    return e.code() == ErrorCode::kUnsupportedOp ? CaseResult::kSkipped : CaseResult::kFailed;
  }
}

// The names an --expected-fail file lists: one case a line, its name first (a reason may
// follow); empty lines and # comments skipped.
std::set<std::string> ReadExpectedFailures(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadFile(path);
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    if ((words >> name) && name[0] != '#') names.insert(name);
  }
  return names;
}

}  // namespace

CaseCounts RunCaseFolders(const Options& o, const std::string& dir, const std::string& filter, bool verbose,
                          std::ostream& out, std::ostream& err, const std::set<std::string>& expected_fail) {
  if (!IsDirectory(dir)) throw Error(ErrorCode::kIo, "cases: '" + dir + "' is not a directory");
  CaseCounts c;
  for (const std::string& name : ListDirectory(dir)) {
    const std::string cdir = JoinPath(dir, name);
    if (!FileExists(JoinPath(cdir, "model.onnx"))) continue;
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    std::string hash, why;
    const CaseResult r = RunCase(cdir, o, &hash, &why, err);
    std::string line_name = name;
    if (line_name.rfind("test_", 0) == 0) line_name = line_name.substr(5);
    out << "case/" << line_name << " " << hash << "\n";
    const bool expected = r == CaseResult::kFailed && expected_fail.count(name);
    if (r == CaseResult::kPassed)
      ++c.passed;
    else if (expected)
      ++c.expected_failures;
    else if (r == CaseResult::kFailed)
      ++c.failed;
    else
      ++c.skipped;
    if (verbose) {
      if (r == CaseResult::kPassed)
        err << "PASS " << name << "\n";
      else
        err << (expected ? "XFAIL " : r == CaseResult::kFailed ? "FAIL " : "SKIP ") << name << ": " << why << "\n";
    }
  }
  out.flush();
  return c;
}

int CmdCases(const Options& o, std::ostream& out, std::ostream& err) {
  std::string dir, filter;
  std::set<std::string> expected_fail;
  bool verbose = false;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    if (a == "--filter" && i + 1 < o.rest.size())
      filter = o.rest[++i];
    else if (a == "--expected-fail" && i + 1 < o.rest.size())
      expected_fail = ReadExpectedFailures(o.rest[++i]);
    else if (a == "--verbose")
      verbose = true;
    else if (!a.empty() && a[0] != '-' && dir.empty())
      dir = a;
    else
      throw Error(ErrorCode::kInvalidArgument, "cases: unexpected argument '" + a + "'");
  }
  if (dir.empty()) throw Error(ErrorCode::kInvalidArgument, "cases: give the folder of case folders");
  const CaseCounts c = RunCaseFolders(o, dir, filter, verbose, out, err, expected_fail);
  err << c.passed << " passed, " << c.failed << " failed, " << c.skipped << " skipped";
  if (c.expected_failures) err << ", " << c.expected_failures << " expected failures";
  err << "\n";
  return c.failed == 0 ? 0 : 1;
}

}  // namespace onemodel::cli
