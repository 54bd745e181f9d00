// A classifier run with OneModel's C++ API: MODEL INPUT.npy [OUTPUT]. Feeds the .npy to
// the model's first input, prints the top-5 classes of OUTPUT (default: the first
// output) and the output's exact-mode hash, the same on every CPU and in every browser.
#include <onemodel/onemodel.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL INPUT.npy [OUTPUT]\n", argv[0]);
    return 2;
  }
  try {
    onemodel::Session session(argv[1]);  // exact mode, every core, the best ISA
    const onemodel::Tensor input = onemodel::LoadNpy(argv[2]);
    const std::string output = argc > 3 ? argv[3] : session.outputs().at(0).name;
    const auto results = session.Run({{session.inputs().at(0).name, input}}, {output});
    const onemodel::Tensor& scores = results[0].value.tensor();
    if (scores.type() != onemodel::ElementType::kFloat) {
      std::fprintf(stderr, "%s: output '%s' is %s, not FLOAT\n", argv[0], output.c_str(),
                   onemodel::ElementTypeName(scores.type()).c_str());
      return 1;
    }
    const float* p = scores.data<float>();
    std::vector<int64_t> order(size_t(scores.size()));
    std::iota(order.begin(), order.end(), 0);
    const size_t k = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                      [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    for (size_t i = 0; i < k; ++i)
      std::printf("top%zu class %lld score %.6f\n", i + 1, (long long)order[i], p[order[i]]);
    std::printf("%s %s\n", output.c_str(), onemodel::GoldenHash(results).c_str());
    return 0;
  } catch (const onemodel::Error& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
