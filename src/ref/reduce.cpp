// Reference reductions (see reduce.h).
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ref {

float SumF32(const float* x, size_t n) { return SumCanonical<kCanonicalLanes>(x, n); }

}  // namespace ref
}  // namespace onemodel::impl
