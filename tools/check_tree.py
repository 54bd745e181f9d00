#!/usr/bin/env python3
"""The tree's shape rules (tools/test.sh's lint row):

1. Layers. Every `#include "X/..."` in src/L/ names a layer X at or below L in
   core, simd, ref, kernels, graph, ops, onnx, passes, runtime, api, cli; src/ref includes
   only core, simd and ref. The public headers (onemodel/) are for api and cli only.
   native/ and wasm/ stand above runtime, beside cli (runtime -> cli | native | wasm -> js),
   in two kinds: a platform file, one the engine library compiles (CMakeLists.txt's
   ONEMODEL_PLATFORM_SRC and ONEMODEL_MODULE_PLATFORM_SRC: native/cpu.cpp, wasm/platform.cpp,
   wasm/files.cpp, the hooks core/io.h and runtime/dispatch.h declare), includes the layers core to runtime and its
   own folder; a program (native/main.cpp, wasm/bindings.cpp: every other file there)
   includes only the public headers (onemodel/) and the CLI's (src/cli, by name: "cli.h").
2. No file in src/ over 800 lines.
3. No function in src/ over 120 lines (from its signature to its closing brace).
4. Every kernel of src/kernels/kernels.inc is called as `kernels.<name>(` in
   tests/test_kernels.cpp (its bitwise test against the reference kernel). Every
   operator algorithm's test is checked by the suite itself (tests/ops/op_test.h).
5. Named paths exist. A path named in a comment of a source file (src, tests, tools, native,
   wasm, js, include, examples, cmake, .github, .ci, CMakeLists.txt) or on any line of a doc
   (README.md, docs/*.md) exists. Prose is every line of a .md; // and /* */ comments in
   C, C++, JS and .proto; # comments (and Python's docstrings) in Python, shell, CMake and
   YAML; <!-- --> and the scripts' comments in HTML. A word names a path when its first
   component is a top-level folder (src, tests, tools, docs, native, wasm, js, include,
   examples, testdata, cmake, .github, .ci) or a layer of src/, it has a second, and its
   name ends in .h .cpp .inc .c .py .sh .mjs .js .cjs .md .json .txt .proto or .cmake
   (`ops/parallel.h`, `tests/ops/conv/conv_test.cpp`); it exists when found from the root, from
   src/ or from the file's own folder. Not paths: placeholders and wildcards (<family>, *,
   {a,b}, $X, ..., a component X), words starting elsewhere (../shared, ~/.cache, /usr,
   URLs), paths through what builds and tools make (build/, models/, node_modules/,
   dist/, gen/) and generated protobuf headers (onnx/onnx.pb.h). #include lines are the
   compiler's to check.
6. `thread_local` in src/ only for types without a destructor (pointers, bool, integer
   types); an object with one is ONEMODEL_PER_THREAD (core/per_thread.h), whose MinGW-w64
   form does not run its destructor on storage emulated TLS has already freed.

Prints each violation and exits 1 if there is any; --list prints every function's
length, longest first.
"""
import ast
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
THREAD_LOCAL = re.compile(r"\bthread_local\s+([^;=({]*?)\s*\b\w+\s*(?:=[^;]*)?;")
TRIVIAL_TLS = re.compile(r"^(?:const\s+)?(?:bool|char|int|unsigned|float|double|size_t|u?int(?:8|16|32|64)_t)$|\*$")


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


def platform_sources():
    """The files of native/ and wasm/ that the engine library compiles (CMakeLists.txt's
    ONEMODEL_PLATFORM_SRC, and ONEMODEL_MODULE_PLATFORM_SRC: compiled once per wasm module):
    the hooks core and runtime declare (file access, CPU features)."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        sets = re.findall(r"set\(ONEMODEL_(?:MODULE_)?PLATFORM_SRC\s([^)]*)\)", f.read())
    return {os.path.normpath(name) for names in sets for name in names.split()}


def host_sources():
    for host in ("native", "wasm"):
        for f in sorted(os.listdir(os.path.join(ROOT, host))):
            if f.endswith(SOURCE_EXT):
                yield os.path.join(ROOT, host, f)


def check_host_includes(path, lines, platform):
    """native/ and wasm/: a platform file (engine library) includes the layers up to runtime;
    a program (native/main.cpp, wasm/bindings.cpp) the public headers and the CLI's only."""
    errors = []
    rel = os.path.relpath(path, ROOT)
    own, cli = os.path.dirname(path), os.path.join(ROOT, "src", "cli")
    for n, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        target = m.group(1)
        top = target.split("/")[0]
        where = f"{rel}:{n}"
        if rel in platform:
            if "/" not in target:
                if not os.path.exists(os.path.join(own, target)):
                    errors.append(f"{where}: includes {target}, not in its folder")
            elif top not in RANK or RANK[top] > RANK["runtime"]:
                errors.append(f"{where}: includes {target}; a platform file (ONEMODEL_PLATFORM_SRC) "
                              "includes the layers up to runtime only")
        elif "/" in target:
            if top != PUBLIC:
                errors.append(f"{where}: includes {target}; a program includes the public headers "
                              "and the CLI's only")
        elif not any(os.path.exists(os.path.join(d, target)) for d in (own, cli)):
            errors.append(f"{where}: includes {target}, neither in its folder nor the CLI's (src/cli)")
    return errors


RAW = re.compile(r'R"([^(]*)\(')


def scan(text, quotes="\"'"):
    """The text cut into (kind, start, end) pieces: "comment" (// and /* */), "raw" (a C++ raw
    string), "string" (a literal between two of `quotes`) and "code"."""
    special = re.compile(r'//|/\*|R"|[' + re.escape(quotes) + "]")
    i, n = 0, len(text)
    while i < n:
        m = special.search(text, i)
        start = m.start() if m else n
        if start > i:
            yield "code", i, start
            i = start
            continue
        raw = RAW.match(text, i)
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield "comment", i, j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            yield "comment", i, j
            i = j
        elif raw:
            end = text.find(")" + raw.group(1) + '"', i)
            end = n if end < 0 else end + len(raw.group(1)) + 2
            yield "raw", i, end
            i = end
        elif text[i] in quotes:
            j = i + 1
            while j < n and text[j] != text[i]:
                j += 2 if text[j] == "\\" else 1
            yield "string", i, min(j, n - 1) + 1
            i = j + 1
        else:  # an R not opening a raw string
            yield "code", i, i + 1
            i += 1


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out = []
    for kind, i, j in scan(text):
        if kind == "code":
            out.append(text[i:j])
        elif kind == "string":
            out.append(" " * (j - i))
        else:  # blanked, not dropped: offsets stay the text's
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
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


# Rule 5: the paths that comments and docs name.
SCANNED = ["src", "tests", "tools", "native", "wasm", "js", "include", "examples", "cmake", ".github", ".ci"]
TOP_FOLDERS = ["src", "tests", "tools", "docs", "native", "wasm", "js", "include", "examples", "testdata", "cmake",
               ".github", ".ci"]
PATH_EXT = (".h", ".cpp", ".inc", ".c", ".py", ".sh", ".mjs", ".js", ".cjs", ".md", ".json", ".txt", ".proto",
            ".cmake")
SLASH_COMMENTS = (".h", ".cpp", ".inc", ".c", ".mjs", ".js", ".cjs", ".ts", ".proto")
HASH_COMMENTS = (".py", ".sh", ".cmake", ".yml", ".yaml", ".in")
# A run of path characters; a {a,b} alternation stays in one run (and is then skipped).
PATH_WORD = re.compile(r"(?:[\w./+~$@*<>-]|\{[^}\s]*\})+")
PLACEHOLDER = set("<>*{}$@~")
NOT_IN_TREE = {"build", "models", "node_modules", "dist", "gen"}  # made by builds and tools


def named_paths(text):
    """The repository paths a line of prose names: a word whose first component is a top-level
    folder or a layer of src/ and whose name ends in one of PATH_EXT. Skipped: placeholders
    and wildcards (<family>, *, {a,b}, ..., X), paths through folders that builds and tools
    make (build/, models/, dist/, gen/, ...) and generated protobuf headers (*.pb.h)."""
    for m in PATH_WORD.finditer(text):
        word = m.group(0).rstrip(".-")
        parts = word.split("/")
        if len(parts) < 2 or not word.endswith(PATH_EXT):
            continue
        if parts[0] not in TOP_FOLDERS and parts[0] not in RANK:
            continue
        if PLACEHOLDER & set(word) or "..." in word or "X" in parts[:-1] + [parts[-1].split(".")[0]]:
            continue
        if NOT_IN_TREE & set(parts) or ".pb." in parts[-1]:
            continue
        yield word


def path_exists(word, path):
    """Whether word names a file from the root, from src/ or from path's own folder."""
    bases = [ROOT, os.path.join(ROOT, "src"), os.path.dirname(path)]
    return any(os.path.exists(os.path.join(base, word)) for base in bases)


def hash_comment(line):
    """The # comment of a line of shell, Python, CMake or YAML ("" if none): a # outside
    quotes at the line's start or after a blank."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == "\\" and quote == '"':
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[i:]
    return ""


def prose(path, text):
    """(line, text) of the prose of a file: every line of a .md; the comments of code (// and
    /* */ in C, C++, JS and .proto; # and Python's docstrings in Python, shell, CMake and YAML;
    <!-- --> and the scripts' comments in HTML). Other files have none."""
    name = os.path.basename(path)
    lines = text.split("\n")
    if name.endswith(".md"):
        return list(enumerate(lines, 1))
    if name.endswith(SLASH_COMMENTS):
        return slash_comments(text, 0, "\"'`" if name.endswith((".mjs", ".js", ".cjs", ".ts")) else "\"'")
    if name.endswith(".html"):
        found = []
        for m in re.finditer(r"<!--.*?-->", text, re.S):
            found += [(text.count("\n", 0, m.start()) + 1 + k, part) for k, part in enumerate(m.group(0).split("\n"))]
        for m in re.finditer(r"<script[^>]*>(.*?)</script>", text, re.S):
            found += slash_comments(m.group(1), text.count("\n", 0, m.start(1)), "\"'`")
        return found
    if name.endswith(HASH_COMMENTS) or name == "CMakeLists.txt" or text.startswith("#!"):
        found = [(n, hash_comment(line)) for n, line in enumerate(lines, 1)]
        if name.endswith(".py"):
            found += python_docstrings(text)
        return [(n, c) for n, c in found if c]
    return []


def slash_comments(text, first_line, quotes):
    found = []
    for kind, i, j in scan(text, quotes):
        if kind == "comment":
            line = first_line + text.count("\n", 0, i) + 1
            found += [(line + k, part) for k, part in enumerate(text[i:j].split("\n"))]
    return found


def python_docstrings(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                found += [(first.lineno + k, part) for k, part in enumerate(first.value.value.split("\n"))]
    return found


def prose_files():
    yield os.path.join(ROOT, "README.md")
    yield os.path.join(ROOT, "CMakeLists.txt")
    for f in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        if f.endswith(".md"):
            yield os.path.join(ROOT, "docs", f)
    for top in SCANNED:
        for base, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs.sort()
            for f in sorted(files):
                yield os.path.join(base, f)


def check_paths():
    errors = []
    for path in prose_files():
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # binary (a corpus file, a model)
        rel = os.path.relpath(path, ROOT)
        for n, line in prose(path, text):
            for word in named_paths(line):
                if not path_exists(word, path):
                    errors.append(f"{rel}:{n}: names {word}, which does not exist")
    return errors


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
    errors, lengths = check_kernel_tests() + check_paths(), []
    platform = platform_sources()
    for path in host_sources():
        with open(path, encoding="utf-8") as f:
            errors += check_host_includes(path, f.read().split("\n"), platform)
    for path in sources():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        rel = os.path.relpath(path, ROOT)
        errors += check_includes(path, lines)
        for n, line in enumerate(lines, 1):
            code = line.split("//")[0]
            if "thread_local" in code and not rel.endswith("per_thread.h"):
                m = THREAD_LOCAL.search(code)
                if not m or not TRIVIAL_TLS.search(m.group(1).strip()):
                    errors.append(f"{rel}:{n}: thread_local of a type with a destructor (ONEMODEL_PER_THREAD)")
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
    print(f"check_tree: layers, file sizes (<= {MAX_FILE_LINES}), function sizes (<= {MAX_FUNCTION_LINES}), "
          "kernel tests, named paths and thread_local types ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
