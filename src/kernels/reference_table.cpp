// The kernel table of the oracle: every entry the reference kernel of src/ref/.
#include "kernels/kernels.h"
#include "ref/conv.h"
#include "ref/elementwise.h"
#include "ref/gemm.h"
#include "ref/nbits.h"
#include "ref/reduce.h"
#include "ref/softmax.h"
#include "ref/transpose.h"

namespace onemodel::impl {

const KernelTable& ReferenceKernelTable() {
  static const KernelTable kTable = [] {
    KernelTable t;
#define ONEMODEL_KERNEL(name, ret, params) t.name = &ref::name;
#include "kernels/kernels.inc"
#undef ONEMODEL_KERNEL
    return t;
  }();
  return kTable;
}

}  // namespace onemodel::impl
