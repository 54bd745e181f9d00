#!/usr/bin/env python3
"""The tree's shape rules, checked over src/ (tools/test.sh's lint row):

1. Layers. Every `#include "X/..."` in src/L/ names a layer X at or below L in
   core, simd, ref, kernels, graph, ops, onnx, passes, runtime, api, cli; src/ref includes
   only core, simd and ref. The public headers (onemodel/) are for api and cli only.
2. No file in src/ over 800 lines.
3. No function in src/ over 120 lines (from its signature to its closing brace).
4. Every kernel of src/kernels/kernels.inc is called as `kernels.<name>(` in
   tests/test_kernels.cpp (its bitwise test against the reference kernel). Every
   operator algorithm's test is checked by the suite itself (tests/ops/op_test.h).

Prints each violation and exits 1 if there is any; --list prints every function's
length, longest first.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["core", "simd", "ref", "kernels", "graph", "ops", "onnx", "passes", "runtime", "api", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}
# Includes a layer may make beyond the order: the public headers (api, cli) and the
# generated protobuf headers (under onnx/, built from src/onnx).
PUBLIC = "onemodel"
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
SOURCE_EXT = (".h", ".cpp", ".inc", ".c")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources():
    for base, _, files in os.walk(os.path.join(ROOT, "src")):
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                yield os.path.join(base, f)


def layer_of(path):
    rel = os.path.relpath(path, os.path.join(ROOT, "src"))
    return rel.split(os.sep)[0]


def check_includes(path, lines):
    errors = []
    layer = layer_of(path)
    for n, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        target = m.group(1)
        if "/" not in target:
            continue  # the file's own folder (cli's "cli.h")
        top = target.split("/")[0]
        where = f"{os.path.relpath(path, ROOT)}:{n}"
        if top == PUBLIC:
            if layer not in ("api", "cli"):
                errors.append(f"{where}: includes the public header {target} (api and cli only)")
            continue
        if top not in RANK:
            errors.append(f"{where}: includes {target}, outside the layers")
            continue
        if RANK[top] > RANK[layer]:
            errors.append(f"{where}: {layer} includes {target}, a layer above it ({top})")
        if layer == "ref" and top not in ("core", "simd", "ref"):
            errors.append(f"{where}: ref includes {target}; ref depends on core and simd only")
    return errors


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))  # blanked, not dropped: offsets stay the text's
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                end = n if end < 0 else end + len(m.group(1)) + 2
                out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
                i = end
            else:
                out.append(c)
                i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j, n - 1) - i + 1))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*(\(|$)")
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def functions(text):
    """(name, first line, last line) of every function body opened at namespace or class
    scope: lambdas and blocks inside a function count toward that function."""
    code = strip_code(text)
    # Preprocessor lines do not delimit statements.
    code = re.sub(r"(?m)^\s*#.*$", lambda m: " " * len(m.group(0)), code)
    stack = []  # kinds of the open braces: "scope", "function", "other"
    found = []
    header_start = 0
    for i, c in enumerate(code):
        if c in ";":
            header_start = i + 1
        elif c == "{":
            header = code[header_start:i]
            inside_function = any(k[0] == "function" for k in stack)
            kind = "other"
            if not inside_function:
                h = " ".join(header.split())
                if SCOPE.search(h) and "(" not in h.split("{")[0].split("=")[0]:
                    kind = "scope"
                elif h.startswith("extern"):
                    kind = "scope"
                elif ")" in h and not CONTROL.search(h) and not h.endswith("=") and "=" not in h.split("(")[0]:
                    kind = "function"
            start_line = text.count("\n", 0, header_start + len(header) - len(header.lstrip())) + 1
            stack.append((kind, start_line, " ".join(header.split())[:80]))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, start_line, name = stack.pop()
                if kind == "function":
                    found.append((name, start_line, text.count("\n", 0, i) + 1))
            header_start = i + 1
    return found


def check_kernel_tests():
    with open(os.path.join(ROOT, "src", "kernels", "kernels.inc"), encoding="utf-8") as f:
        names = re.findall(r"^ONEMODEL_KERNEL\((\w+),", f.read(), re.M)
    with open(os.path.join(ROOT, "tests", "test_kernels.cpp"), encoding="utf-8") as f:
        tests = f.read()
    if not names:
        return ["src/kernels/kernels.inc: no ONEMODEL_KERNEL entries found"]
    return [f"src/kernels/kernels.inc: kernel {n} has no test in tests/test_kernels.cpp (kernels.{n}(...))"
            for n in names if f"kernels.{n}(" not in tests]


def main():
    list_all = "--list" in sys.argv[1:]
    errors, lengths = check_kernel_tests(), []
    for path in sources():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        rel = os.path.relpath(path, ROOT)
        errors += check_includes(path, lines)
        count = len(lines) - (1 if text.endswith("\n") else 0)
        if count > MAX_FILE_LINES:
            errors.append(f"{rel}: {count} lines (at most {MAX_FILE_LINES})")
        for name, first, last in functions(text):
            length = last - first + 1
            lengths.append((length, f"{rel}:{first}", name))
            if length > MAX_FUNCTION_LINES:
                errors.append(f"{rel}:{first}: function of {length} lines (at most {MAX_FUNCTION_LINES}): {name}")
    if list_all:
        for length, where, name in sorted(lengths, reverse=True):
            print(f"{length:5d} {where} {name}")
    for e in errors:
        print(e)
    if errors:
        print(f"check_tree: {len(errors)} violation(s)")
        return 1
    print(f"check_tree: layers, file sizes (<= {MAX_FILE_LINES}), function sizes (<= {MAX_FUNCTION_LINES}) "
          "and kernel tests ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
