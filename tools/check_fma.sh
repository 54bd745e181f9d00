#!/usr/bin/env bash
# Exact mode never fuses a multiply and an add (exact-contract section 2); fast mode's GEMM
# twins do (src/kernels/gemm.cpp, Step<true>), and so does the softmax rows' twin
# (src/kernels/softmax.cpp SoftmaxRowsFmaF32). This checks the built code, not the flags:
# every function of each library given that contains a fused multiply-add instruction
# (x86 vfmadd/vfmsub/vfnmadd/vfnmsub, AArch64 fmla/fmls/fmadd/fmsub/fnmadd/fnmsub, s390x
# maeb/madb/mseb/msdb[r] and the vector unit's vfma/vfms/vfnma/vfnms, RISC-V
# f[n]madd/f[n]msub.s/.d/.h and the vector extension's vf[n]macc/vf[n]msac/vf[n]madd/
# vf[n]msub) must be one of the twins' instances: its name has "Fma", or is TiledGemm /
# GemmImpl / GemmPackedImpl / GemmPackedIndirectImpl / Tile (src/kernels/gemm.cpp),
# SoftmaxRowsImpl / SoftmaxRowGroup (src/kernels/softmax.cpp) or
# GemmFold / GemmBiasActFold / GemmPackedIndirectFold / FoldStep (src/ref/gemm.cpp)
# instantiated with kFma = true. (ref::FusedMulAddF32, the twins' scalar step, fuses in
# double arithmetic, with no FMA instruction.) It also
# checks that each x86-64 and AArch64 library has fused instructions somewhere (the SIMD
# twins really fuse).
# Usage: tools/check_fma.sh LIB.a [LIB.a ...]   (x64, arm64, s390x and riscv64 static libraries)
# Last line: `N libraries, F functions with fused multiply-adds, all in fast twins`, or the
# offending functions (exit 1).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: tools/check_fma.sh LIB.a ..." >&2; exit 2; }
bad=0; total=0; libs=0
for lib in "$@"; do
  # x86-64 and AArch64 libraries have SIMD twins, which must fuse; the portable rows'
  # (s390x, RISC-V: the scalar target, whose twins run ref::FusedMulAddF32 without an FMA
  # instruction) must simply hold none outside the twins.
  twins=1
  case "$(readelf -h "$lib" 2>/dev/null | grep -m1 'Machine:' || true)" in
    *AArch64*) od=aarch64-linux-gnu-objdump ;;
    *S/390*) od=s390x-linux-gnu-objdump; twins=0 ;;
    *RISC-V*) od=riscv64-linux-gnu-objdump; twins=0 ;;
    *) od=objdump ;;
  esac
  if ! command -v "$od" >/dev/null; then echo "check_fma: $od not found for $lib" >&2; exit 1; fi
  # One line per function holding a fused instruction: its demangled name.
  fns=$("$od" -d -C --no-show-raw-insn "$lib" | awk '
    /^[0-9a-f]+ <\.L[^>]*>:$/ { next }  # a local label (RISC-V objdump prints them): same function
    /^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn); next }
    /\tv?f(n)?m(add|sub)[0-9]*[ps][sd]|\tfml[as]\t|\tf(n)?m(add|sub)\t|\tm[as][ed]br?\t|\t[vw]fn?m[as][sd]b\t|\tfn?m(add|sub)\.[sdhq]\t|\tvfn?m(acc|sac|add|sub)\.v/ { if (!(fn in seen)) { seen[fn] = 1; print fn } }')
  n=$(printf '%s\n' "$fns" | grep -c . || true)
  if [ "$n" = 0 ] && [ "$twins" = 1 ]; then
    echo "check_fma: $lib: no fused multiply-add at all (the twins do not fuse?)"; bad=$((bad + 1))
  fi
  while IFS= read -r fn; do
    [ -n "$fn" ] || continue
    head="${fn%%(*}"
    if ! [[ "$head" =~ Fma || "$fn" =~ (TiledGemm|GemmImpl|GemmPackedImpl|GemmPackedIndirectImpl|Tile|SoftmaxRowsImpl|SoftmaxRowGroup|GemmFold|GemmBiasActFold|GemmPackedIndirectFold|FoldStep)\<true ]]; then
      echo "check_fma: $lib: exact code holds a fused multiply-add: ${fn:0:200}"
      bad=$((bad + 1))
    fi
  done <<< "$fns"
  total=$((total + n)); libs=$((libs + 1))
done
if [ "$bad" -gt 0 ]; then echo "$bad problems"; exit 1; fi
echo "$libs libraries, $total functions with fused multiply-adds, all in fast twins"
