#!/usr/bin/env bash
# Exact mode's arithmetic on 32-bit x86 is SSE2's (CMakeLists.txt: -msse2 -mfpmath=sse;
# src/core/exact.h refuses a build whose floats have excess precision). The x87 unit still
# appears where GCC has no SSE2 instruction: float values returned in st(0), and 64-bit
# integer conversions (fild/fistp: exact loads and one rounding at the store, by the x87
# control word FpEnvGuard sets), with one x87 addition, the exact fix-up of 2^64 for an
# unsigned value. This checks the built code of each i686 library given: every function
# holding x87 arithmetic holds only that addition, and only beside a 64-bit integer load
# (fildll). Self-test first: a probe compiled with -mfpmath=387 must be flagged, the same
# probe with -mfpmath=sse must not.
# Usage: tools/check_x87.sh LIB.a [LIB.a ...]   (i686 static libraries)
# Last line: `N libraries, F functions with x87 additions, all 64-bit integer conversions`,
# or the offending functions (exit 1).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: tools/check_x87.sh LIB.a ..." >&2; exit 2; }
# Functions (demangled) with x87 arithmetic other than the conversions' fix-up.
scan() {
  objdump -d -C --no-show-raw-insn "$1" | awk '
    /^[0-9a-f]+ <\.L[^>]*>:$/ { next }  # a local label (a switch case): still the same function
    /^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn); next }
    /\tfildll/ { fild[fn] = 1 }
    /\tf(add|adds|addl|addp)[ \t]/ { add[fn] = 1 }
    /\tf(sub|subr|mul|div|divr)[psl]?[ \t]|\tf(sub|subr|mul|div|divr)p?$|\tfi(add|sub|subr|mul|div|divr)[sl]?[ \t]|\tf(sqrt|prem|prem1|scale|rndint|2xm1|yl2x|yl2xp1|ptan|patan|sin|cos|sincos|xtract)/ { bad[fn] = 1 }
    END {
      for (f in bad) print "BAD " f
      for (f in add) if (!(f in bad)) print (f in fild ? "OK " : "BAD ") f
    }'
}
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'float mul(float a, float b) { return a * b; }\n' >"$probe/p.cpp"
i686-linux-gnu-g++ -O2 -mfpmath=387 -c "$probe/p.cpp" -o "$probe/x87.o"
i686-linux-gnu-g++ -O2 -msse2 -mfpmath=sse -c "$probe/p.cpp" -o "$probe/sse.o"
if ! scan "$probe/x87.o" | grep -q '^BAD mul'; then echo "check_x87: the self-test's x87 multiply was not found"; exit 1; fi
if scan "$probe/sse.o" | grep -q '^BAD'; then echo "check_x87: the self-test's SSE2 multiply was flagged"; exit 1; fi
bad=0; ok=0; libs=0
for lib in "$@"; do
  out=$(scan "$lib")
  while IFS= read -r line; do
    case "$line" in
      BAD*) echo "check_x87: $lib: x87 arithmetic: ${line:4:200}"; bad=$((bad + 1)) ;;
      OK*) ok=$((ok + 1)) ;;
    esac
  done <<<"$out"
  libs=$((libs + 1))
done
if [ "$bad" -gt 0 ]; then echo "$bad problems"; exit 1; fi
echo "$libs libraries, $ok functions with x87 additions, all 64-bit integer conversions"
