// The commands about targets: targets, bench-lanes, bench-peak (see cli.cpp's usage).
#include <cstring>
#include <iomanip>

#include "options.h"

namespace onemodel::cli {
namespace {

// The targets up to the --isa cap (or the best) that this CPU runs, ref excluded; or the
// cap alone without `all`.
std::vector<std::string> TargetsUpToCap(const Options& o, bool all, const char* cmd) {
  std::vector<std::string> isas;
  const std::string cap = o.isa.empty() ? BestTarget() : o.isa;
  if (!all) return {cap};
  const std::vector<TargetInfo> ts = CompiledTargets();
  size_t cap_at = ts.size();
  for (size_t k = 0; k < ts.size(); ++k)
    if (ts[k].name == cap) cap_at = k;
  if (cap_at == ts.size())
    throw Error(ErrorCode::kUnsupportedIsa, std::string(cmd) + ": '" + cap + "' is not compiled into this build");
  for (size_t k = 0; k <= cap_at; ++k) {
    if (ts[k].name != "ref" && ts[k].supported) isas.push_back(ts[k].name);
  }
  return isas;
}

}  // namespace

int CmdTargets(const Options& o, std::ostream& out, std::ostream& err) {
  const std::string kernels = DescribeKernels(o.isa);  // errors before any output
  if (Env("ONEMODEL_VERBOSE") == "1") err << kernels << std::flush;
  const std::string first = kernels.substr(0, kernels.find('\n'));
  const std::string selected =
      first.substr(std::strlen("[onemodel] target: "), first.find(" (") - std::strlen("[onemodel] target: "));
  out << "cpu: " << CpuDescription() << "\n";
  out << "compiled:";
  for (const TargetInfo& t : CompiledTargets()) out << " " << t.name << (t.supported ? "" : "(unsupported)");
  out << "\n";
  out << "selected: " << selected << "\n";
  const size_t tiles = kernels.find("[onemodel] gemm tiles: ");
  if (tiles != std::string::npos) {
    const size_t from = tiles + std::strlen("[onemodel] ");
    out << kernels.substr(from, kernels.find('\n', from) - from) << "\n";
  }
  const size_t fma = kernels.find("[onemodel] fused multiply-add");
  if (fma != std::string::npos) {
    const size_t from = fma + std::strlen("[onemodel] ");
    out << kernels.substr(from, kernels.find('\n', from) - from) << "\n";
  }
  out << "threads: " << (o.threads ? o.threads : DefaultThreads()) << "\n";
  out << "canonical lanes (L): " << CanonicalLanes() << "\n";
  return 0;
}

int CmdBenchPeak(const Options& o, std::ostream& out) {
  int reps = 5;
  bool all = false;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    if (a == "--all")
      all = true;
    else if (a == "--reps" && i + 1 < o.rest.size())
      reps = int(ParseInt("--reps", o.rest[++i], 1, 1000));
    else
      throw Error(ErrorCode::kInvalidArgument, "bench-peak: unexpected argument '" + a + "'");
  }
  for (const std::string& isa : TargetsUpToCap(o, all, "bench-peak")) {
    const MulAddPeak p = MeasureMulAddPeak(isa, reps);
    out << "target=" << p.target << " lanes=" << p.lanes << " gflops=" << std::fixed << std::setprecision(1) << p.gflops
        << "\n";
  }
  return 0;
}

int CmdBenchLanes(const Options& o, std::ostream& out, std::ostream& err) {
  size_t n = 4096;
  int reps = 7;
  bool all = false;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    if (a == "--all")
      all = true;
    else if (a == "--n" && i + 1 < o.rest.size())
      n = size_t(ParseInt("--n", o.rest[++i], 1, int64_t(1) << 28));
    else if (a == "--reps" && i + 1 < o.rest.size())
      reps = int(ParseInt("--reps", o.rest[++i], 1, 1000));
    else
      throw Error(ErrorCode::kInvalidArgument, "bench-lanes: unexpected argument '" + a + "'");
  }
  const std::vector<std::string> isas = TargetsUpToCap(o, all, "bench-lanes");
  out << "target   L     n         ns/elem   GB/s     equals-ref\n";
  bool ok = true;
  for (const std::string& isa : isas) {
    for (const LaneBenchRow& r : BenchCanonicalSums(isa, n, reps)) {
      ok &= r.equals_reference;
      out << std::left << std::setw(9) << r.target << std::setw(6) << r.lanes << std::setw(10) << r.n << std::fixed
          << std::setprecision(4) << std::setw(10) << r.ns_per_element << std::setprecision(2) << std::setw(9)
          << (4.0 / r.ns_per_element) << (r.equals_reference ? "yes" : "NO") << "\n";
    }
  }
  if (!ok) err << "bench-lanes: a vector sum differs from the reference: this is a bug\n";
  return ok ? 0 : 1;
}

// families: every operator family's table (the lines docs/operator-families.md shows).
int CmdFamilies(const Options& o, std::ostream& out) {
  if (!o.rest.empty()) throw Error(ErrorCode::kInvalidArgument, "families: takes no arguments");
  for (const OperatorFamily& f : OperatorFamilies()) {
    out << "family " << f.family << ":";
    for (const std::string& op : f.op_types) out << " " << op;
    out << "\n";
    for (const AlgorithmInfo& a : f.algorithms)
      out << "  " << a.name << " " << (a.fast ? "fast" : "exact") << " " << a.device
          << (a.kernels.empty() ? "" : " [" + a.kernels + "]") << "\n";
  }
  return 0;
}

}  // namespace onemodel::cli
