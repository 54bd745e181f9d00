/* The C ABI (include/onemodel/onemodel_c.h) from a C program: the API tests' cases in C.
 * Run from the repository root: reads testdata/graphs/. Prints one line per check and
 * `N passed, N failed` last; exits 1 on any failure. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onemodel/onemodel_c.h"

static int passed = 0, failed = 0;

static void check(int ok, const char* what) {
  if (ok) {
    ++passed;
    printf("ok   %s\n", what);
  } else {
    ++failed;
    printf("FAIL %s (last error: %s)\n", what, om_last_error());
  }
}

/* The committed golden hash of key (testdata/graphs/golden-exact.txt) into out[65]. */
static int committed_hash(const char* key, char out[65]) {
  FILE* f = fopen("testdata/graphs/golden-exact.txt", "r");
  char name[256], hash[128];
  int found = 0;
  if (!f) return 0;
  while (fscanf(f, "%255s %127s", name, hash) == 2) {
    if (strcmp(name, key) == 0 && strlen(hash) == 64) {
      memcpy(out, hash, 65);
      found = 1;
      break;
    }
  }
  fclose(f);
  return found;
}

static unsigned char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  unsigned char* buf;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = (unsigned char*)malloc((size_t)n + 1);
  *size = fread(buf, 1, (size_t)n, f);
  fclose(f);
  return buf;
}

/* A protobuf writer just big enough for a small ModelProto: fields appended to a buffer. */
struct Pb {
  unsigned char b[512];
  size_t n;
};
static void pb_varint(struct Pb* p, unsigned long long v) {
  do {
    p->b[p->n++] = (unsigned char)((v & 0x7F) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v);
}
static void pb_int(struct Pb* p, int field, unsigned long long v) {
  pb_varint(p, (unsigned long long)field << 3);
  pb_varint(p, v);
}
static void pb_bytes(struct Pb* p, int field, const void* data, size_t n) {
  pb_varint(p, ((unsigned long long)field << 3) | 2);
  pb_varint(p, n);
  memcpy(p->b + p->n, data, n);
  p->n += n;
}
static void pb_str(struct Pb* p, int field, const char* s) { pb_bytes(p, field, s, strlen(s)); }
static void pb_msg(struct Pb* p, int field, const struct Pb* m) { pb_bytes(p, field, m->b, m->n); }

/* Y = X + W, X float[4], W float[4] stored as external data "w.bin" from byte 4. */
static size_t external_add_model(unsigned char* out) {
  struct Pb model = {{0}, 0}, graph = {{0}, 0}, node = {{0}, 0}, init = {{0}, 0}, kv = {{0}, 0}, opset = {{0}, 0};
  struct Pb input = {{0}, 0}, type = {{0}, 0}, tensor_type = {{0}, 0}, shape = {{0}, 0}, dim = {{0}, 0};
  struct Pb output = {{0}, 0};
  pb_str(&node, 1, "X"); /* NodeProto: input 1, output 2, op_type 4 */
  pb_str(&node, 1, "W");
  pb_str(&node, 2, "Y");
  pb_str(&node, 4, "Add");
  pb_int(&init, 1, 4); /* TensorProto: dims 1, data_type 2, name 8, external_data 13, data_location 14 */
  pb_int(&init, 2, 1);
  pb_str(&init, 8, "W");
  pb_str(&kv, 1, "location");
  pb_str(&kv, 2, "w.bin");
  pb_msg(&init, 13, &kv);
  kv.n = 0;
  pb_str(&kv, 1, "offset");
  pb_str(&kv, 2, "4");
  pb_msg(&init, 13, &kv);
  pb_int(&init, 14, 1);
  pb_int(&dim, 1, 4); /* ValueInfoProto X: name 1, type 2 { tensor_type 1 { elem_type 1, shape 2 { dim 1 } } } */
  pb_msg(&shape, 1, &dim);
  pb_int(&tensor_type, 1, 1);
  pb_msg(&tensor_type, 2, &shape);
  pb_msg(&type, 1, &tensor_type);
  pb_str(&input, 1, "X");
  pb_msg(&input, 2, &type);
  pb_str(&output, 1, "Y");
  pb_msg(&graph, 1, &node); /* GraphProto: node 1, name 2, initializer 5, input 11, output 12 */
  pb_str(&graph, 2, "g");
  pb_msg(&graph, 5, &init);
  pb_msg(&graph, 11, &input);
  pb_msg(&graph, 12, &output);
  pb_int(&opset, 2, 13); /* OperatorSetIdProto: version 2 */
  pb_int(&model, 1, 8);  /* ModelProto: ir_version 1, graph 7, opset_import 8 */
  pb_msg(&model, 7, &graph);
  pb_msg(&model, 8, &opset);
  memcpy(out, model.b, model.n);
  return model.n;
}

/* External data given in memory (om_session_options_add_external_data): from bytes, the
 * caller's buffer freed right after creation; without it, a typed error. */
static void test_external_data(void) {
  unsigned char model[512];
  const size_t n = external_add_model(model);
  const float file[5] = {99.0f, 1.5f, -2.0f, 3.25f, 1e30f}; /* W = file[1..4] (offset 4) */
  const float zeros[4] = {0, 0, 0, 0};
  const int64_t dims[1] = {4};
  const char* in_names[1] = {"X"};
  float* copy = (float*)malloc(sizeof file);
  OmSessionOptions* o = NULL;
  OmSession* s = NULL;
  OmTensor* x = NULL;
  OmTensor* y = NULL;
  const float* got;
  memcpy(copy, file, sizeof file);
  check(om_session_create_from_bytes(model, n, NULL, &s) == OM_INVALID_MODEL && s == NULL &&
            strstr(om_last_error(), "external data 'w.bin' was not given") != NULL,
        "external data not given: OM_INVALID_MODEL naming it");
  check(om_session_options_create(&o) == OM_OK &&
            om_session_options_add_external_data(o, "w.bin", copy, sizeof file) == OM_OK,
        "external data added to the options");
  check(om_session_options_add_external_data(o, "x.bin", NULL, 8) == OM_INVALID_ARGUMENT,
        "external data with NULL bytes: OM_INVALID_ARGUMENT");
  check(om_session_create_from_bytes(model, n, o, &s) == OM_OK && s != NULL,
        "session from bytes with its external data");
  memset(copy, 0xFF, sizeof file); /* the session copied what it needs */
  free(copy);
  check(om_tensor_create_copy(OM_FLOAT, dims, 1, zeros, sizeof zeros, &x) == OM_OK, "X made");
  check(s && om_session_run(s, in_names, (const OmTensor* const*)&x, 1, NULL, 1, &y) == OM_OK, "run");
  got = y ? (const float*)om_tensor_data(y) : NULL;
  check(got && got[0] == 1.5f && got[1] == -2.0f && got[2] == 3.25f && got[3] == 1e30f,
        "Y = W: the external bytes from byte 4");
  om_tensor_free(y);
  om_tensor_free(x);
  om_session_free(s);
  om_session_options_free(o);
}

/* Concurrent runs on one session: each thread runs it `runs` times and counts the runs
 * whose hash is not the committed one (or that failed). */
struct Worker {
  const OmSession* s;
  const OmTensor* x;
  const char* want;
  int runs, bad;
};

static void* work(void* arg) {
  struct Worker* w = (struct Worker*)arg;
  const char* in_name = "x";
  const char* out_name = "probs";
  int r;
  for (r = 0; r < w->runs; ++r) {
    OmTensor* y = NULL;
    char h[65];
    if (om_session_run(w->s, &in_name, &w->x, 1, &out_name, 1, &y) != OM_OK ||
        om_golden_hash((const OmTensor* const*)&y, 1, h) != OM_OK || strcmp(h, w->want) != 0) {
      ++w->bad;
    }
    om_tensor_free(y);
  }
  return NULL;
}

int main(void) {
  const char* model = "testdata/graphs/conv_net.onnx";
  char want[65] = {0}, got[65] = {0};
  OmSession* s = NULL;
  OmSessionOptions* o = NULL;
  OmTensor* x = NULL;
  OmTensor* outs[2] = {NULL, NULL};
  const char* in_names[1] = {"x"};
  const char* probs[1] = {"probs"};
  OmElementType type = OM_UNDEFINED;
  int has_shape = 0;
  size_t rank = 0;
  const int64_t* dims = NULL;

  printf("row: C ABI, onemodel %s, best target %s\n", om_version(), om_best_target());
  check(committed_hash("conv_net/probs", want), "the committed hash of conv_net/probs is read");

  /* A session with options; its declared input. */
  check(om_session_options_create(&o) == OM_OK, "options created");
  check(om_session_options_set_threads(o, 2) == OM_OK, "threads set");
  check(om_session_options_set_mode(o, "exact") == OM_OK, "mode set");
  check(om_session_create(model, o, &s) == OM_OK && s != NULL, "session created from a path");
  check(om_session_input_count(s) == 1 && strcmp(om_session_input_name(s, 0), "x") == 0, "one input named x");
  check(om_session_output_count(s) == 2 && strcmp(om_session_output_name(s, 0), "probs") == 0,
        "two outputs, probs first");
  check(om_session_input_name(s, 1) == NULL, "input name out of range is NULL");
  check(om_session_input_info(s, 0, &type, &has_shape, &rank, &dims) == OM_OK && type == OM_FLOAT && has_shape &&
            rank == 4 && dims[1] == 3 && dims[3] == 32,
        "input info: FLOAT[1,3,32,32]");
  check(om_session_input_info(s, 5, &type, NULL, NULL, NULL) == OM_INVALID_ARGUMENT,
        "input info out of range: OM_INVALID_ARGUMENT");
  check(strcmp(om_session_output_dim_name(s, 0, 1), "") == 0 && om_session_output_dim_name(s, 0, 2) == NULL &&
            om_session_output_dim_name(s, 2, 0) == NULL,
        "output dim name: \"\" for a fixed dimension, NULL out of range");
  check(strcmp(om_session_last_profile(s), "") == 0, "no profile without profiling");

  /* The golden graph's committed hash, from a loaded .npy, all outputs and a requested one. */
  check(om_npy_load("testdata/graphs/conv_net.x.npy", &x) == OM_OK && om_tensor_type(x) == OM_FLOAT &&
            om_tensor_size(x) == 3 * 32 * 32,
        "npy loaded");
  check(om_session_run(s, in_names, (const OmTensor* const*)&x, 1, NULL, 2, outs) == OM_OK, "run, every output");
  check(om_golden_hash((const OmTensor* const*)outs, 1, got) == OM_OK && strcmp(got, want) == 0,
        "probs has the committed golden hash");
  check(om_tensor_rank(outs[0]) == 2 && om_tensor_dims(outs[0])[1] == 10, "probs is [1,10]");
  om_tensor_free(outs[0]);
  om_tensor_free(outs[1]);
  outs[0] = outs[1] = NULL;
  check(om_session_run(s, in_names, (const OmTensor* const*)&x, 1, probs, 1, outs) == OM_OK &&
            om_golden_hash((const OmTensor* const*)outs, 1, got) == OM_OK && strcmp(got, want) == 0,
        "run, requested output probs: the same hash");
  om_tensor_free(outs[0]);
  outs[0] = NULL;
  {
    OmSession* ps = NULL;
    OmSessionOptions* po = NULL;
    check(om_session_options_create(&po) == OM_OK && om_session_options_set_profiling(po, 1) == OM_OK &&
              om_session_create(model, po, &ps) == OM_OK,
          "a session with profiling");
    check(strcmp(om_session_last_profile(ps), "") == 0, "no profile before a run");
    check(om_session_run(ps, in_names, (const OmTensor* const*)&x, 1, probs, 1, outs) == OM_OK &&
              strstr(om_session_last_profile(ps), "Conv") != NULL,
          "the last run's profile names the Conv nodes' time");
    om_tensor_free(outs[0]);
    outs[0] = NULL;
    om_session_free(ps);
    om_session_options_free(po);
  }

  /* A view of the caller's memory gives the same bits. */
  {
    size_t bytes = om_tensor_byte_size(x);
    float* mem = (float*)malloc(bytes);
    OmTensor* v = NULL;
    memcpy(mem, om_tensor_data(x), bytes);
    check(om_tensor_create_view(OM_FLOAT, om_tensor_dims(x), om_tensor_rank(x), mem, bytes, &v) == OM_OK &&
              om_tensor_data(v) == mem,
          "view created over the caller's memory");
    check(om_session_run(s, in_names, (const OmTensor* const*)&v, 1, probs, 1, outs) == OM_OK &&
              om_golden_hash((const OmTensor* const*)outs, 1, got) == OM_OK && strcmp(got, want) == 0,
          "run on the view: the committed hash");
    om_tensor_free(outs[0]);
    outs[0] = NULL;
    om_tensor_free(v);
    free(mem);
  }

  /* Errors: typed, with a message, and the session keeps working. */
  {
    OmTensor* bad = NULL;
    int64_t small[4] = {1, 3, 16, 16};
    int64_t one[1] = {4};
    int32_t ints[4] = {1, 2, 3, 4};
    OmSession* none = NULL;
    size_t n = 0;
    unsigned char* bytes = read_all(model, &n);
    check(om_session_run(s, NULL, NULL, 0, NULL, 2, outs) == OM_MISSING_INPUT && outs[0] == NULL &&
              strstr(om_last_error(), "'x'") != NULL,
          "no feed: OM_MISSING_INPUT naming x, no output returned");
    check(om_tensor_create(OM_FLOAT, small, 4, &bad) == OM_OK, "a wrongly shaped tensor is made");
    check(om_session_run(s, in_names, (const OmTensor* const*)&bad, 1, NULL, 2, outs) == OM_SHAPE_MISMATCH &&
              strstr(om_last_error(), "[1,3,16,16]") != NULL,
          "wrong shape: OM_SHAPE_MISMATCH naming both shapes");
    om_tensor_free(bad);
    bad = NULL;
    check(om_tensor_create_copy(OM_INT32, one, 1, ints, sizeof ints, &bad) == OM_OK, "an int32 tensor is made");
    check(om_session_run(s, in_names, (const OmTensor* const*)&bad, 1, NULL, 2, outs) == OM_TYPE_MISMATCH,
          "wrong type: OM_TYPE_MISMATCH");
    om_tensor_free(bad);
    check(om_tensor_create_copy(OM_INT32, one, 1, ints, 3, &bad) == OM_INVALID_ARGUMENT && bad == NULL,
          "copy with the wrong byte count: OM_INVALID_ARGUMENT");
    check(om_session_run(s, in_names, (const OmTensor* const*)&x, 1, NULL, 1, outs) == OM_INVALID_ARGUMENT,
          "n_outputs that is not the output count: OM_INVALID_ARGUMENT");
    check(om_session_create("/nonexistent/model.onnx", NULL, &none) == OM_IO && none == NULL, "missing file: OM_IO");
    check(om_session_create_from_bytes("garbage!", 8, NULL, &none) == OM_INVALID_MODEL &&
              strncmp(om_last_error(), "invalid_model: ", 15) == 0,
          "garbage bytes: OM_INVALID_MODEL, message starts with the code's name");
    check(om_session_create_from_bytes(bytes, n / 2, NULL, &none) == OM_INVALID_MODEL,
          "truncated model: OM_INVALID_MODEL");
    check(om_session_create_from_bytes(bytes, n, NULL, &none) == OM_OK && none != NULL,
          "the whole file from bytes: OK");
    om_session_free(none);
    none = NULL;
    free(bytes);
    check(om_session_options_set_threads(o, -3) == OM_INVALID_ARGUMENT, "threads -3: OM_INVALID_ARGUMENT");
    check(om_session_options_set_mode(o, "quick") == OM_INVALID_ARGUMENT, "mode quick: OM_INVALID_ARGUMENT");
    check(om_session_options_set_isa(o, "avx9") == OM_OK && om_session_create(model, o, &none) == OM_INVALID_ARGUMENT &&
              strstr(om_last_error(), "avx9") != NULL,
          "unknown ISA: OM_INVALID_ARGUMENT naming it");
    check(om_session_options_set_isa(o, "ref") == OM_OK && om_session_options_disable_pass(o, "nope") == OM_OK &&
              om_session_create(model, o, &none) == OM_INVALID_ARGUMENT,
          "unknown pass: OM_INVALID_ARGUMENT");
    check(om_session_create(model, NULL, NULL) == OM_INVALID_ARGUMENT, "NULL out pointer: OM_INVALID_ARGUMENT");
    {
      OmSessionOptions* t = NULL;
      check(om_session_options_create(&t) == OM_OK && om_session_options_set_avx512_tile_bits(t, 300) == OM_OK &&
                om_session_create(model, t, &none) == OM_INVALID_ARGUMENT &&
                strstr(om_last_error(), "avx512_tile_bits") != NULL,
            "AVX-512 tiles 300: OM_INVALID_ARGUMENT naming the option");
      check(om_session_options_set_avx512_tile_bits(t, 512) == OM_OK && om_session_create(model, t, &none) == OM_OK,
            "AVX-512 tiles 512: a session (on any CPU; only AVX-512 tables use it)");
      om_session_free(none);
      none = NULL;
      om_session_options_free(t);
    }
    {
      OmSessionOptions* t = NULL;
      check(om_session_options_create(&t) == OM_OK &&
                om_session_options_set_limit(t, "max_widgets", 1) == OM_INVALID_ARGUMENT &&
                strstr(om_last_error(), "unknown limit") != NULL,
            "an unknown limit: OM_INVALID_ARGUMENT");
      check(om_session_options_set_limit(t, "max_model_bytes", 100) == OM_OK &&
                om_session_create(model, t, &none) == OM_LIMIT_EXCEEDED &&
                strstr(om_last_error(), "max_model_bytes (100)") != NULL,
            "max_model_bytes 100: OM_LIMIT_EXCEEDED naming the limit");
      om_session_options_free(t);
      OmRunOptions* r = NULL;
      check(om_run_options_create(&r) == OM_OK && om_run_options_set_time_limit_ms(r, -1) == OM_INVALID_ARGUMENT &&
                om_run_options_terminate(r) == OM_OK &&
                om_session_run_with_options(s, r, in_names, (const OmTensor* const*)&x, 1, probs, 1, outs) ==
                    OM_CANCELLED &&
                outs[0] == NULL,
            "a terminated run: OM_CANCELLED, no output");
      check(om_run_options_reset(r) == OM_OK && om_run_options_set_time_limit_ms(r, 60000) == OM_OK &&
                om_session_run_with_options(s, r, in_names, (const OmTensor* const*)&x, 1, probs, 1, outs) == OM_OK,
            "after reset, under a time limit of a minute: a result");
      om_tensor_free(outs[0]);
      om_run_options_free(r);
    }
    check(om_session_run(s, in_names, (const OmTensor* const*)&x, 1, probs, 1, outs) == OM_OK,
          "the session still runs");
    om_tensor_free(outs[0]);
    outs[0] = NULL;
  }

  /* Four threads, one session, identical bits. */
  {
    struct Worker w[4];
    pthread_t t[4];
    int k, bad = 0, started = 1;
    for (k = 0; k < 4; ++k) {
      w[k].s = s;
      w[k].x = x;
      w[k].want = want;
      w[k].runs = 10;
      w[k].bad = 0;
      started &= pthread_create(&t[k], NULL, work, &w[k]) == 0;
    }
    for (k = 0; k < 4; ++k) {
      pthread_join(t[k], NULL);
      bad += w[k].bad;
    }
    check(started && bad == 0, "40 runs from 4 threads on one session: every hash the committed one");
  }

  /* Strings and the reference target. */
  {
    const char* words[3] = {"exact", "", "mode"};
    int64_t three[1] = {3};
    OmTensor* t = NULL;
    size_t len = 99;
    OmSession* r = NULL;
    OmSessionOptions* ro = NULL;
    check(om_tensor_create_strings(words, 3, three, 1, &t) == OM_OK && om_tensor_type(t) == OM_STRING,
          "string tensor made");
    check(strcmp(om_tensor_string(t, 2, &len), "mode") == 0 && len == 4 && om_tensor_string(t, 3, NULL) == NULL,
          "string elements read back");
    om_tensor_free(t);
    check(om_session_options_create(&ro) == OM_OK && om_session_options_set_isa(ro, "ref") == OM_OK &&
              om_session_create(model, ro, &r) == OM_OK && strcmp(om_session_target(r), "ref") == 0,
          "a session on the reference kernels");
    check(om_session_run(r, in_names, (const OmTensor* const*)&x, 1, probs, 1, outs) == OM_OK &&
              om_golden_hash((const OmTensor* const*)outs, 1, got) == OM_OK && strcmp(got, want) == 0,
          "the oracle gives the committed hash too");
    om_tensor_free(outs[0]);
    om_session_free(r);
    om_session_options_free(ro);
  }

  om_tensor_free(x);
  om_session_free(s);
  om_session_options_free(o);
  om_session_free(NULL);
  om_tensor_free(NULL);
  om_session_options_free(NULL);
  test_external_data();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
