#!/usr/bin/python3
"""A model past 2 GiB, loaded by every route (issue 34): writes big.onnx (a few hundred
bytes) and big.onnx.data (N tables of float32 [rows, 1024], 2.5 GiB by default, in one
file: the last tables sit past byte 2^31), then loads and runs it

  native      build/native/onemodel run big.onnx (from the path; the folder's data)
  c-api       libonemodel.so through ctypes: om_session_create_from_bytes with the data
              given by om_session_options_add_external_data (bytes in memory, freed by
              the caller once the session exists), in a child process
  node-path   the npm package's InferenceSession.create(path) under node (wasm)
  node-bytes  InferenceSession.create(modelBytes, {externalData: [{path, data: file}]})

and checks every output against numpy's (y = sum over tables of table[ids], all values
multiples of 1/64 below 2^10, so the sums are exact in float32 whatever the order).
Prints per route: seconds, peak resident memory of its process, and ok / FAIL.

  /usr/bin/python3 tools/big_model.py [--dir build/big-model] [--gib 2.5] [--routes ...]
                                      [--keep] [--reuse]

Long (writes GiBs, needs about 2x the model in memory per route): not in CI."""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLS = 1024
ROUTES = ["native", "c-api", "node-path", "node-bytes"]


def table(k, rows):
    """Table k's values: a hash of (k, index) as a multiple of 1/64 in [-16, 16)."""
    h = np.arange(rows * COLS, dtype=np.uint32)  # uint32 arithmetic wraps modulo 2^32
    h *= np.uint32(0x9E3779B1)
    h += np.uint32((k * 0x632BE59B + 1) & 0xFFFFFFFF)
    h ^= h >> np.uint32(15)
    h *= np.uint32(0x2C1B3C6D)
    h >>= np.uint32(7)
    h %= np.uint32(2048)
    return (h.astype(np.float32) - 1024.0) / 64.0


def write_model(d, gib):
    tables = max(1, int(round(gib * 2)))  # 512 MiB tables
    rows = (512 << 20) // (COLS * 4)
    ids = np.array([0, 1, rows // 2, rows - 2, rows - 1, 12345, 7, rows - 1], dtype=np.int64)
    want = np.zeros((len(ids), COLS), dtype=np.float32)
    inits, names = [], []
    with open(os.path.join(d, "big.onnx.data"), "wb") as f:
        for k in range(tables):
            t = table(k, rows).reshape(rows, COLS)
            want += t[ids]
            offset = f.tell()
            f.write(t.tobytes())
            tp = TensorProto()
            tp.name = f"table{k}"
            tp.data_type = TensorProto.FLOAT
            tp.dims.extend([rows, COLS])
            tp.data_location = TensorProto.EXTERNAL
            for key, value in (("location", "big.onnx.data"), ("offset", str(offset)), ("length", str(t.nbytes))):
                e = tp.external_data.add()
                e.key, e.value = key, value
            inits.append(tp)
            del t
    nodes = [helper.make_node("Gather", [f"table{k}", "ids"], [f"g{k}"], axis=0) for k in range(tables)]
    nodes.append(helper.make_node("Sum", [f"g{k}" for k in range(tables)], ["y"]))
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("ids", TensorProto.INT64, [len(ids)])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(ids), COLS])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(d, "big.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    np.save(os.path.join(d, "ids.npy"), ids)
    np.save(os.path.join(d, "want.npy"), want)
    return os.path.getsize(os.path.join(d, "big.onnx.data"))


def c_api_child(d, lib_path):
    """The c-api route, in its own process: everything through the C ABI from bytes."""
    import ctypes
    lib = ctypes.CDLL(lib_path)
    P = ctypes.c_void_p
    lib.om_last_error.restype = ctypes.c_char_p
    lib.om_session_options_create.argtypes = [ctypes.POINTER(P)]
    lib.om_session_options_add_external_data.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.om_session_create_from_bytes.argtypes = [ctypes.c_char_p, ctypes.c_size_t, P, ctypes.POINTER(P)]
    lib.om_session_run.argtypes = [P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(P), ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.POINTER(P)]
    lib.om_tensor_create_copy.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, P,
                                          ctypes.c_size_t, ctypes.POINTER(P)]
    lib.om_tensor_data.argtypes = [P]
    lib.om_tensor_data.restype = P
    lib.om_tensor_byte_size.argtypes = [P]
    lib.om_tensor_byte_size.restype = ctypes.c_size_t

    def ok(status, what):
        if status != 0:
            sys.exit(f"{what}: {lib.om_last_error().decode()}")

    model = open(os.path.join(d, "big.onnx"), "rb").read()
    data = open(os.path.join(d, "big.onnx.data"), "rb").read()
    opts, session = P(), P()
    ok(lib.om_session_options_create(ctypes.byref(opts)), "options")
    ok(lib.om_session_options_add_external_data(opts, b"big.onnx.data", data, len(data)), "external data")
    ok(lib.om_session_create_from_bytes(model, len(model), opts, ctypes.byref(session)), "session from bytes")
    del data  # the caller's copy goes; the session has what it needs
    ids = np.load(os.path.join(d, "ids.npy"))
    dims = (ctypes.c_int64 * 1)(len(ids))
    x, y = P(), P()
    ok(lib.om_tensor_create_copy(7, dims, 1, ids.ctypes.data, ids.nbytes, ctypes.byref(x)), "ids tensor")
    names = (ctypes.c_char_p * 1)(b"ids")
    ok(lib.om_session_run(session, names, (P * 1)(x), 1, None, 1, ctypes.byref(y)), "run")
    out = ctypes.string_at(lib.om_tensor_data(y), lib.om_tensor_byte_size(y))
    os.makedirs(os.path.join(d, "out-c-api"), exist_ok=True)
    np.save(os.path.join(d, "out-c-api", "y.npy"), np.frombuffer(out, dtype=np.float32).reshape(len(ids), COLS))


NODE_SCRIPT = r"""
import * as ort from '%(entry)s';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
const [dir, route] = process.argv.slice(2);
const model = `${dir}/big.onnx`;
const session = route === 'node-path'
  ? await ort.InferenceSession.create(model)
  : await ort.InferenceSession.create(readFileSync(model), { externalData: [{ path: 'big.onnx.data', data: `${dir}/big.onnx.data` }] });
const npy = readFileSync(`${dir}/ids.npy`);  // header: magic, version, length (uint16 at 8)
const start = npy.byteOffset + 10 + npy.readUInt16LE(8);
const ids = new BigInt64Array(npy.buffer.slice(start, npy.byteOffset + npy.length));
const { y } = await session.run({ ids: new ort.Tensor('int64', ids, [ids.length]) });
mkdirSync(`${dir}/out-${route}`, { recursive: true });
writeFileSync(`${dir}/out-${route}/y.bin`, new Uint8Array(y.data.buffer, y.data.byteOffset, y.data.byteLength));
"""


def run_child(cmd):
    """Runs cmd; returns (exit status, seconds, peak resident MiB, stderr tail)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    err = p.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, time.monotonic() - start, usage.ru_maxrss / 1024, err.strip()[-600:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=os.path.join(ROOT, "build", "big-model"))
    ap.add_argument("--gib", type=float, default=2.5, help="external data size (tables of 512 MiB)")
    ap.add_argument("--routes", default=",".join(ROUTES))
    ap.add_argument("--keep", action="store_true", help="keep the files (default: removed at the end)")
    ap.add_argument("--reuse", action="store_true", help="use the files a --keep run left in --dir")
    ap.add_argument("--c-api-child", nargs=2, metavar=("DIR", "LIB"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.c_api_child:
        return c_api_child(*a.c_api_child)
    d = os.path.abspath(a.dir)
    os.makedirs(d, exist_ok=True)
    t = time.monotonic()
    if a.reuse and os.path.exists(os.path.join(d, "want.npy")):
        size = os.path.getsize(os.path.join(d, "big.onnx.data"))
        print(f"[big] {d}/big.onnx + big.onnx.data ({size} bytes, {size / 2**30:.2f} GiB) reused")
    else:
        size = write_model(d, a.gib)
        print(f"[big] {d}/big.onnx + big.onnx.data ({size} bytes, {size / 2**30:.2f} GiB) written in "
              f"{time.monotonic() - t:.1f} s")
    want = np.load(os.path.join(d, "want.npy"))
    with open(os.path.join(d, "run.mjs"), "w") as f:
        f.write(NODE_SCRIPT % {"entry": os.path.join(ROOT, "js", "index.node.mjs")})
    cli = os.path.join(ROOT, "build", "native", "onemodel")
    commands = {
        "native": [cli, "run", f"{d}/big.onnx", "--input", f"ids={d}/ids.npy", "--save", f"{d}/out-native"],
        "c-api": [sys.executable, os.path.abspath(__file__), "--c-api-child", d,
                  os.path.join(ROOT, "build", "native", "libonemodel.so")],
        "node-path": ["node", f"{d}/run.mjs", d, "node-path"],
        "node-bytes": ["node", f"{d}/run.mjs", d, "node-bytes"],
    }
    failed = 0
    for route in a.routes.split(","):
        if route not in commands:
            sys.exit(f"unknown route '{route}' (routes: {', '.join(ROUTES)})")
        code, secs, rss, err = run_child(commands[route])
        got = None
        npy, raw = os.path.join(d, f"out-{route}", "y.npy"), os.path.join(d, f"out-{route}", "y.bin")
        if code == 0 and os.path.exists(npy):
            got = np.load(npy)
        elif code == 0 and os.path.exists(raw):
            got = np.fromfile(raw, dtype=np.float32).reshape(want.shape)
        good = got is not None and got.shape == want.shape and np.array_equal(got.view(np.uint32), want.view(np.uint32))
        failed += not good
        print(f"[big] {route:10s} {'ok  ' if good else 'FAIL'} {secs:7.1f} s  peak RSS {rss:7.0f} MiB" +
              ("" if good else f"  (exit {code}) {err}"))
    if not a.keep:
        for name in ("big.onnx", "big.onnx.data", "ids.npy", "want.npy", "run.mjs"):
            os.remove(os.path.join(d, name))
    print(f"[big] {len(a.routes.split(',')) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
