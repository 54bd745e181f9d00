/* A classifier run with OneModel's C ABI: MODEL INPUT.npy [OUTPUT]. Prints the top-5
 * classes of OUTPUT (default: the first output) and the output's exact-mode hash. */
#include <onemodel/onemodel_c.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char* what) {
  fprintf(stderr, "classify_c: %s: %s\n", what, om_last_error());
  return 1;
}

int main(int argc, char** argv) {
  OmSession* session = NULL;
  OmTensor* input = NULL;
  OmTensor* scores = NULL;
  const char* input_name;
  const char* output_name;
  char hash[65];
  const float* p;
  int64_t n, i, top[5];
  int k, rc = 1;
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL INPUT.npy [OUTPUT]\n", argv[0]);
    return 2;
  }
  if (om_session_create(argv[1], NULL, &session) != OM_OK) return fail("loading the model");
  if (om_npy_load(argv[2], &input) != OM_OK) {
    rc = fail("reading the input");
    goto done;
  }
  input_name = om_session_input_name(session, 0);
  output_name = argc > 3 ? argv[3] : om_session_output_name(session, 0);
  if (om_session_run(session, &input_name, (const OmTensor* const*)&input, 1, &output_name, 1, &scores) != OM_OK) {
    rc = fail("running the model");
    goto done;
  }
  if (om_tensor_type(scores) != OM_FLOAT) {
    fprintf(stderr, "classify_c: the output is not FLOAT\n");
    goto done;
  }
  p = (const float*)om_tensor_data(scores);
  n = om_tensor_size(scores);
  for (k = 0; k < 5 && k < n; ++k) { /* the k-th best: highest score, lowest index on ties */
    int64_t best = -1;
    for (i = 0; i < n; ++i) {
      int taken = 0, j;
      for (j = 0; j < k; ++j) taken |= top[j] == i;
      if (!taken && (best < 0 || p[i] > p[best])) best = i;
    }
    top[k] = best;
    printf("top%d class %lld score %.6f\n", k + 1, (long long)best, p[best]);
  }
  if (om_golden_hash((const OmTensor* const*)&scores, 1, hash) != OM_OK) {
    rc = fail("hashing");
    goto done;
  }
  printf("%s %s\n", output_name, hash);
  rc = 0;
done:
  om_tensor_free(scores);
  om_tensor_free(input);
  om_session_free(session);
  return rc;
}
