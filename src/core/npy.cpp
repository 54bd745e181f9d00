// .npy reading and writing (see npy.h).
#include "core/npy.h"

#include <cstring>

#include "core/bits.h"
#include "core/error.h"

namespace onemodel::impl {
namespace {

struct Descr {
  const char* code;
  DType dt;
};
const Descr kDescrs[] = {
    {"<f4", DType::kFloat},  {"<f8", DType::kDouble}, {"<f2", DType::kFloat16}, {"|i1", DType::kInt8},
    {"|u1", DType::kUInt8},  {"<i2", DType::kInt16},  {"<u2", DType::kUInt16},  {"<i4", DType::kInt32},
    {"<u4", DType::kUInt32}, {"<i8", DType::kInt64},  {"<u8", DType::kUInt64},  {"|b1", DType::kBool},
};

std::string Field(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t p = header.find(':', k);
  if (p == std::string::npos) return "";
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (header[p] == '\'') {
    const size_t e = header.find('\'', p + 1);
    return header.substr(p + 1, e - p - 1);
  }
  if (header[p] == '(') return header.substr(p, header.find(')', p) - p + 1);
  const size_t e = header.find_first_of(",}", p);
  return header.substr(p, e - p);
}

}  // namespace

Tensor ParseNpy(const uint8_t* data, size_t size, const std::string& what) {
  if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0)
    throw Error(ErrorCode::kInvalidArgument, what + ": not a .npy file");
  const int major = data[6];
  size_t hlen, off;
  if (major == 1) {
    hlen = size_t(data[8]) | (size_t(data[9]) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) throw Error(ErrorCode::kInvalidArgument, what + ": truncated .npy header");
    hlen = size_t(data[8]) | (size_t(data[9]) << 8) | (size_t(data[10]) << 16) | (size_t(data[11]) << 24);
    off = 12;
  } else {
    throw Error(ErrorCode::kInvalidArgument, what + ": unsupported .npy version " + std::to_string(major));
  }
  if (off + hlen > size) throw Error(ErrorCode::kInvalidArgument, what + ": truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(data + off), hlen);
  const std::string descr = Field(header, "descr"), fortran = Field(header, "fortran_order"),
                    shape_s = Field(header, "shape");
  // numpy writes multi-byte types as '<' (little-endian) or '>' (big-endian), one-byte
  // types as '|'; the tensor is in the host's order.
  const bool big_endian_file = !descr.empty() && descr[0] == '>';
  const std::string code = big_endian_file ? "<" + descr.substr(1) : descr;
  DType dt = DType::kUndefined;
  for (const Descr& d : kDescrs)
    if (code == d.code && (!big_endian_file || d.code[0] == '<')) dt = d.dt;
  if (dt == DType::kUndefined)
    throw Error(ErrorCode::kTypeMismatch, what + ": .npy element type '" + descr + "' is not supported");
  if (fortran.find("True") != std::string::npos)
    throw Error(ErrorCode::kInvalidArgument, what + ": Fortran-order .npy arrays are not supported");
  Shape shape;
  for (size_t p = 1; p < shape_s.size();) {
    while (p < shape_s.size() && (shape_s[p] == ' ' || shape_s[p] == ',')) ++p;
    if (p >= shape_s.size() || shape_s[p] == ')') break;
    char* end = nullptr;
    const long long v = std::strtoll(shape_s.c_str() + p, &end, 10);
    if (end == shape_s.c_str() + p) throw Error(ErrorCode::kInvalidArgument, what + ": bad .npy shape " + shape_s);
    shape.push_back(v);
    p = size_t(end - shape_s.c_str());
  }
  // The data must be there before the tensor is allocated (a header may declare anything).
  const size_t need = size_t(CheckedNumElements(shape, DTypeStorageSize(dt), what)) * DTypeStorageSize(dt);
  if (size - off - hlen < need) {
    throw Error(ErrorCode::kInvalidArgument, what + ": .npy data is " + std::to_string(size - off - hlen) +
                                                 " bytes, shape " + ShapeToString(shape) + " needs " +
                                                 std::to_string(need));
  }
  Tensor t = Tensor::Uninitialized(dt, shape, what);
  if (need) std::memcpy(t.mutable_data<uint8_t>(), data + off + hlen, need);
  if (big_endian_file == kLittleEndian) {
    SwapBytesInPlace(t.mutable_data<uint8_t>(), need / DTypeStorageSize(dt), DTypeStorageSize(dt));
  }
  return t;
}

std::vector<uint8_t> SerializeNpy(const Tensor& t) {
  const char* code = nullptr;
  for (const Descr& d : kDescrs)
    if (d.dt == t.dtype()) code = d.code;
  if (!code) throw Error(ErrorCode::kTypeMismatch, "cannot write " + DTypeName(t.dtype()) + " as .npy");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 || i + 1 < t.shape().size() ? "," : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + code + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(header.size() & 0xFF), uint8_t(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  // Always little-endian ('<'), so a .npy file is the same bytes on every host.
  const uint8_t* p = static_cast<const uint8_t*>(t.raw());
  const size_t data_at = out.size();
  out.insert(out.end(), p, p + t.nbytes());
  LittleEndianToHost(out.data() + data_at, t.nbytes() / DTypeStorageSize(t.dtype()), DTypeStorageSize(t.dtype()));
  return out;
}

}  // namespace onemodel::impl
