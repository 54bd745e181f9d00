#!/usr/bin/env python3
"""The C ABI from Python's standard library (ctypes): loads libonemodel.so, runs a
committed golden graph on its committed input and checks the committed hash.

  tests/api/test_ctypes.py [LIBONEMODEL.so]   (default build/native/libonemodel.so)

Run from the repository root. Prints one line per check and `N passed, N failed`."""
import ctypes
import sys

lib_path = sys.argv[1] if len(sys.argv) > 1 else "build/native/libonemodel.so"
lib = ctypes.CDLL(lib_path)
P = ctypes.c_void_p
lib.om_version.restype = ctypes.c_char_p
lib.om_last_error.restype = ctypes.c_char_p
lib.om_session_create.argtypes = [ctypes.c_char_p, P, ctypes.POINTER(P)]
lib.om_session_create_from_bytes.argtypes = [ctypes.c_char_p, ctypes.c_size_t, P, ctypes.POINTER(P)]
lib.om_session_free.argtypes = [P]
lib.om_session_output_count.argtypes = [P]
lib.om_session_output_count.restype = ctypes.c_size_t
lib.om_session_input_name.argtypes = [P, ctypes.c_size_t]
lib.om_session_input_name.restype = ctypes.c_char_p
lib.om_session_run.argtypes = [P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(P), ctypes.c_size_t,
                               ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.POINTER(P)]
lib.om_npy_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
lib.om_tensor_free.argtypes = [P]
lib.om_tensor_create_copy.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, P,
                                      ctypes.c_size_t, ctypes.POINTER(P)]
lib.om_tensor_data.argtypes = [P]
lib.om_tensor_data.restype = P
lib.om_tensor_size.argtypes = [P]
lib.om_tensor_size.restype = ctypes.c_int64
lib.om_golden_hash.argtypes = [ctypes.POINTER(P), ctypes.c_size_t, ctypes.c_char_p]

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what} (last error: {lib.om_last_error().decode()})")


committed = dict(line.split() for line in open("testdata/graphs/golden-exact.txt"))
print(f"row: ctypes, {lib_path}, onemodel {lib.om_version().decode()}")
s = P()
check(lib.om_session_create(b"testdata/graphs/conv_net.onnx", None, ctypes.byref(s)) == 0, "session created")
check(lib.om_session_input_name(s, 0) == b"x", "its input is x")
x = P()
check(lib.om_npy_load(b"testdata/graphs/conv_net.x.npy", ctypes.byref(x)) == 0, "the committed input loaded")
names = (ctypes.c_char_p * 1)(b"x")
ins = (P * 1)(x)
wanted = (ctypes.c_char_p * 1)(b"probs")
outs = (P * 1)()
check(lib.om_session_run(s, names, ins, 1, wanted, 1, outs) == 0, "run, output probs")
digest = ctypes.create_string_buffer(65)
check(lib.om_golden_hash(outs, 1, digest) == 0, "golden hash computed")
check(digest.value.decode() == committed["conv_net/probs"], f"probs hash {digest.value.decode()[:16]}... is the committed one")
probs = ctypes.cast(lib.om_tensor_data(outs[0]), ctypes.POINTER(ctypes.c_float))
total = sum(probs[i] for i in range(lib.om_tensor_size(outs[0])))
check(abs(total - 1.0) < 1e-5, "the softmax sums to 1")
lib.om_tensor_free(outs[0])
# An error is a status with a message, not a crash.
bad = P()
check(lib.om_session_create_from_bytes(b"garbage!", 8, None, ctypes.byref(bad)) == 2 and not bad.value,
      "garbage bytes: OM_INVALID_MODEL (2)")
check(lib.om_last_error().decode().startswith("invalid_model: "), "om_last_error names the code")
check(lib.om_session_run(s, names, (P * 1)(None), 1, wanted, 1, outs) == 1, "a NULL tensor: OM_INVALID_ARGUMENT (1)")
lib.om_tensor_free(x)
lib.om_session_free(s)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
