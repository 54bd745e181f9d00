// File access (see io.h).
#include "core/io.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

#if !defined(__EMSCRIPTEN__)
#include <filesystem>
#endif

namespace onemodel::impl {

#if !defined(__EMSCRIPTEN__)
// Native: the C++ library. The wasm build's versions are the host bridge in wasm/files.cpp.

namespace {
class VectorBytes : public FileBytes {
 public:
  explicit VectorBytes(std::vector<uint8_t> v) : v_(std::move(v)) {}
  const uint8_t* data() const override { return v_.data(); }
  size_t size() const override { return v_.size(); }

 private:
  std::vector<uint8_t> v_;
};
}  // namespace

std::vector<uint8_t> ReadFileRange(const std::string& path, int64_t offset, int64_t length) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(ErrorCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> out;
  try {
    if (std::fseek(f, 0, SEEK_END) != 0) throw Error(ErrorCode::kIo, "cannot seek in '" + path + "'");
    const long long total = std::ftell(f);
    if (offset < 0 || offset > total) {
      throw Error(ErrorCode::kIo, "offset " + std::to_string(offset) + " is past the end of '" + path + "' (" +
                                      std::to_string(total) + " bytes)");
    }
    const long long n = length < 0 ? total - offset : std::min<long long>(length, total - offset);
    out.resize(size_t(n));
    std::fseek(f, long(offset), SEEK_SET);
    if (n > 0 && std::fread(out.data(), 1, size_t(n), f) != size_t(n)) {
      throw Error(ErrorCode::kIo, "short read from '" + path + "'");
    }
  } catch (...) {
    std::fclose(f);
    throw;
  }
  std::fclose(f);
  return out;
}

std::shared_ptr<FileBytes> ReadFile(const std::string& path) {
  return std::make_shared<VectorBytes>(ReadFileRange(path, 0, -1));
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(ErrorCode::kIo, "cannot create '" + path + "': " + std::strerror(errno));
  const bool ok = (size == 0 || std::fwrite(data, 1, size, f) == size);
  if (std::fclose(f) != 0 || !ok) throw Error(ErrorCode::kIo, "cannot write '" + path + "'");
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) out.push_back(e.path().filename().string());
  if (ec) throw Error(ErrorCode::kIo, "cannot list directory '" + path + "': " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

#endif

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string DirName(const std::string& path) {
  const size_t s = path.find_last_of('/');
  if (s == std::string::npos) return ".";
  if (s == 0) return "/";
  return path.substr(0, s);
}

}  // namespace onemodel::impl
