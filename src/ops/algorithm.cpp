// The table of every operator type whose plans choose among algorithms (algorithm.h).
#include "ops/algorithm.h"

#include "ops/attention.h"
#include "ops/cast.h"
#include "ops/conv.h"
#include "ops/conv_transpose.h"
#include "ops/elementwise.h"
#include "ops/int_conv.h"
#include "ops/norms.h"
#include "ops/pool.h"
#include "ops/quant.h"
#include "ops/resize.h"
#include "ops/rnn.h"
#include "ops/shape_ops.h"
#include "ops/softmax.h"
#include "ops/tensor_ops.h"

namespace onemodel::impl {
namespace ops {

const std::vector<OperatorAlgorithms>& AlgorithmTable() {
  static const std::vector<OperatorAlgorithms> kTable = [] {
    std::vector<OperatorAlgorithms> t;
    auto add = [&](std::initializer_list<const char*> ops, std::vector<std::string> names) {
      for (const char* op : ops) t.push_back({op, names});
    };
    add({"Conv"}, AlgorithmNames(kAllConvAlgos, ConvAlgoName));
    add({"ConvTranspose"}, AlgorithmNames(kAllConvTransposeAlgos, ConvTransposeAlgoName));
    add({"MaxPool"}, {PoolAlgoName(PoolAlgo::kReference), PoolAlgoName(PoolAlgo::kMaxPlanes)});
    add({"AveragePool"}, {PoolAlgoName(PoolAlgo::kReference), PoolAlgoName(PoolAlgo::kAveragePlanes)});
    add({"GlobalAveragePool"}, {PoolAlgoName(PoolAlgo::kReference), PoolAlgoName(PoolAlgo::kGlobalAverage)});
    add({"ConvInteger", "QLinearConv"}, AlgorithmNames(kAllIntConvAlgos, IntConvAlgoName));
    add({"MatMulInteger", "QLinearMatMul"}, AlgorithmNames(kAllMatMulIntegerAlgos, MatMulIntegerAlgoName));
    add({"QuantizeLinear"}, AlgorithmNames(kAllQuantizeAlgos, QuantizeAlgoName));
    add({"DequantizeLinear"}, AlgorithmNames(kAllDequantizeAlgos, DequantizeAlgoName));
    add({"DynamicQuantizeLinear"}, AlgorithmNames(kAllDynamicQuantizeAlgos, DynamicQuantizeAlgoName));
    add({"Softmax"}, AlgorithmNames(kAllSoftmaxAlgos, SoftmaxAlgoName));
    add({"LayerNormalization", "RMSNormalization"}, AlgorithmNames(kAllLayerNormAlgos, LayerNormAlgoName));
    add({"InstanceNormalization"}, AlgorithmNames(kAllInstanceNormAlgos, InstanceNormAlgoName));
    add({"Attention"}, AlgorithmNames(kAllAttentionAlgos, AttentionAlgoName));
    add({"RNN", "GRU", "LSTM"}, AlgorithmNames(kAllRnnAlgos, RnnAlgoName));
    add({"Resize"}, AlgorithmNames(kAllResizeAlgos, ResizeAlgoName));
    add({"Transpose"}, AlgorithmNames(kAllTransposeAlgos, TransposeAlgoName));
    add({"Gather"}, AlgorithmNames(kAllGatherAlgos, GatherAlgoName));
    add({"Pad"}, AlgorithmNames(kAllPadAlgos, PadAlgoName));
    add({"Where"}, AlgorithmNames(kAllWhereAlgos, WhereAlgoName));
    add({"Cast"}, AlgorithmNames(kAllCastAlgos, CastAlgoName));
    return t;
  }();
  return kTable;
}

}  // namespace ops
}  // namespace onemodel::impl
