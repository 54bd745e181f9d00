// Every operator family's table (ops/family.h), for the tests, the coverage check, `info`
// and the docs. A family with a table is listed here once.
#include "ops/family.h"

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

const std::vector<FamilyInfo>& Families() {
  static const std::vector<FamilyInfo> kFamilies = [] {
    std::vector<FamilyInfo> t;
    t.push_back(Describe(ConvTable()));
    t.push_back(Describe(ConvTransposeTable()));
    t.push_back(Describe(PoolTable()));
    t.push_back(Describe(IntConvTable()));
    t.push_back(Describe(MatMulIntegerTable()));
    t.push_back(Describe(QuantizeTable()));
    t.push_back(Describe(DequantizeTable()));
    t.push_back(Describe(DynamicQuantizeTable()));
    t.push_back(Describe(SoftmaxTable()));
    t.push_back(Describe(LayerNormTable()));
    t.push_back(Describe(InstanceNormTable()));
    t.push_back(Describe(AttentionTable()));
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
