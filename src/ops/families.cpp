// Every operator family's table (ops/family.h), for the tests, the coverage check, `info`
// and the docs. A family with a table is listed here once.
#include "ops/family.h"

#include "ops/nn/attention.h"
#include "ops/nn/ms_attention.h"
#include "ops/tensor/cast.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_transpose.h"
#include "ops/math/elementwise.h"
#include "ops/math/matmul.h"
#include "ops/quant/int_conv.h"
#include "ops/quant/nbits.h"
#include "ops/nn/norm.h"
#include "ops/conv/pool.h"
#include "ops/quant/quant.h"
#include "ops/image/resize.h"
#include "ops/nn/rnn.h"
#include "ops/tensor/shape_ops.h"
#include "ops/nn/softmax.h"
#include "ops/tensor/pad.h"

namespace onemodel::impl {
namespace ops {

const std::vector<FamilyInfo>& Families() {
  static const std::vector<FamilyInfo> kFamilies = [] {
    std::vector<FamilyInfo> t;
    t.push_back(Describe(ConvTable()));
    t.push_back(Describe(ConvTransposeTable()));
    t.push_back(Describe(PoolTable()));
    t.push_back(Describe(IntConvTable()));
    t.push_back(Describe(MatMulIntegerTable()));
    t.push_back(Describe(MatMulNBitsTable()));
    t.push_back(Describe(QuantizeTable()));
    t.push_back(Describe(DequantizeTable()));
    t.push_back(Describe(DynamicQuantizeTable()));
    t.push_back(Describe(MatMulTable()));
    t.push_back(Describe(GemmTable()));
    t.push_back(Describe(SoftmaxTable()));
    t.push_back(Describe(LayerNormTable()));
    t.push_back(Describe(InstanceNormTable()));
    t.push_back(Describe(AttentionTable()));
    t.push_back(Describe(MsAttentionTable()));
    t.push_back(Describe(RnnTable()));
    t.push_back(Describe(ResizeTable()));
    t.push_back(Describe(TransposeTable()));
    t.push_back(Describe(GatherTable()));
    t.push_back(Describe(PadTable()));
    t.push_back(Describe(WhereTable()));
    t.push_back(Describe(CastTable()));
    return t;
  }();
  return kFamilies;
}

}  // namespace ops
}  // namespace onemodel::impl
