// NumPy .npy files (format versions 1-3): read into a Tensor, write from one. Numeric
// types of either byte order and bool are read into the host's order; files are written
// little-endian; typed errors for anything else.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace onemodel::impl {

Tensor ParseNpy(const uint8_t* data, size_t size, const std::string& what);
std::vector<uint8_t> SerializeNpy(const Tensor& t);

}  // namespace onemodel::impl
