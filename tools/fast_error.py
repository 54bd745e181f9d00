#!/usr/bin/env python3
"""Fast mode against exact mode, per reference model: runs `onemodel --mode exact|fast run
MODEL --save DIR` on the model's stored inputs (models/NAME.inputs) and compares every
output: the largest absolute difference, the largest relative one (to the largest
|exact| of that output), the cosine similarity, and for outputs whose last axis has 1000
classes the top-1 and top-5 agreement per row. Prints a markdown table (docs/performance.md
"Fast mode" records one); never part of the tests.

  /usr/bin/python3 tools/fast_error.py [--only a,b] [--models DIR] [--threads T]

Models where no fast row is planned (`onemodel --mode fast info --plan`) are listed as
such: their outputs are exact mode's bits by construction, and the script checks that.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OM = os.path.join(ROOT, "build", "native", "onemodel")


def inputs_of(models, name):
    args = []
    with open(os.path.join(models, name + ".inputs")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, rel = line.split("=", 1)
            args += ["--input", f"{key}={os.path.join(models, rel)}"]
    return args


def run(mode, model, inputs, threads, out):
    subprocess.run([OM, "--mode", mode, "--threads", str(threads), "run", model, *inputs, "--save", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return {f[:-4]: np.load(os.path.join(out, f)) for f in sorted(os.listdir(out)) if f.endswith(".npy")}


def fast_rows(model, inputs):
    out = subprocess.run([OM, "--mode", "fast", "info", "--plan", model, *inputs], check=True, capture_output=True,
                         text=True)
    return sum(1 for line in out.stdout.splitlines() if line.startswith("plan ") and line.endswith(" fast"))


def compare(a, b):
    a64 = a.astype(np.float64).ravel()
    b64 = b.astype(np.float64).ravel()
    fin = np.isfinite(a64) & np.isfinite(b64)
    d = np.abs(a64[fin] - b64[fin])
    amax = np.abs(a64[fin]).max() if fin.any() else 0.0
    maxabs = d.max() if d.size else 0.0
    rel = maxabs / amax if amax > 0 else 0.0
    den = np.linalg.norm(a64[fin]) * np.linalg.norm(b64[fin])
    cos = float(a64[fin] @ b64[fin] / den) if den > 0 else 1.0
    top = "-"
    if a.ndim >= 1 and a.shape[-1] == 1000:
        ra, rb = a.reshape(-1, 1000), b.reshape(-1, 1000)
        t1 = np.mean(ra.argmax(1) == rb.argmax(1))
        t5 = np.mean([set(np.argsort(-x)[:5]) == set(np.argsort(-y)[:5]) for x, y in zip(ra, rb)])
        top = f"{t1:.0%} / {t5:.0%}"
    same_nonfinite = bool(np.array_equal(~np.isfinite(a64), ~np.isfinite(b64)))
    return maxabs, rel, cos, top, same_nonfinite


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--models", default=os.path.join(ROOT, "models"))
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    names = a.only.split(",") if a.only else sorted(
        f[:-5] for f in os.listdir(a.models) if f.endswith(".onnx") and os.path.exists(os.path.join(a.models, f[:-5] + ".inputs")))
    print(f"Fast against exact mode, `{os.path.relpath(OM, ROOT)} --threads {a.threads}` (tools/fast_error.py).")
    print("")
    print("| model | fast rows | outputs | bits | max abs diff | max diff / max abs | min cosine | top-1 / top-5 agree |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for name in names:
        model = os.path.join(a.models, name + ".onnx")
        if not os.path.exists(model):
            print(f"fast_error: {name}: not prepared, skipped", file=sys.stderr)
            continue
        ins = inputs_of(a.models, name)
        rows = fast_rows(model, ins)
        with tempfile.TemporaryDirectory() as t:
            e = run("exact", model, ins, a.threads, os.path.join(t, "e"))
            f = run("fast", model, ins, a.threads, os.path.join(t, "f"))
        same = all(e[o].tobytes() == f[o].tobytes() for o in e)
        if rows == 0 and not same:
            print(f"fast_error: {name}: no fast row planned, yet the bits differ", file=sys.stderr)
            bad += 1
        worst_abs, worst_rel, worst_cos, tops = 0.0, 0.0, 1.0, []
        for out in e:
            if e[out].dtype.kind != "f":
                if not np.array_equal(e[out], f[out]):
                    tops.append(f"{out}: integers differ")
                continue
            m, r, c, top, nf = compare(e[out], f[out])
            if not nf:
                print(f"fast_error: {name}/{out}: NaN/inf positions differ", file=sys.stderr)
            worst_abs, worst_rel, worst_cos = max(worst_abs, m), max(worst_rel, r), min(worst_cos, c)
            if top != "-":
                tops.append(top)
        bits = "exact's" if same else "differ"
        print(f"| {name} | {rows} | {len(e)} | {bits} | {worst_abs:.3g} | {worst_rel:.3g} | {worst_cos:.7f} | "
              f"{', '.join(tops) if tops else '-'} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
