// File access (see io.h).
#include "core/io.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

#if !defined(__EMSCRIPTEN__)
#include <sys/stat.h>

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
  CheckPathText(path);
  {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw Error(ErrorCode::kIo, "cannot read '" + path + "': not a regular file");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(ErrorCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> out;
  try {
    // fseeko / ftello: offsets past 2 GiB wherever long is 32 bits.
    if (::fseeko(f, 0, SEEK_END) != 0) throw Error(ErrorCode::kIo, "cannot seek in '" + path + "'");
    const long long total = ::ftello(f);
    if (total < 0) throw Error(ErrorCode::kIo, "cannot tell the size of '" + path + "'");
    if (offset < 0 || offset > total) {
      throw Error(ErrorCode::kIo, "offset " + std::to_string(offset) + " is past the end of '" + path + "' (" +
                                      std::to_string(total) + " bytes)");
    }
    const long long n = length < 0 ? total - offset : std::min<long long>(length, total - offset);
    out.resize(size_t(n));
    if (::fseeko(f, off_t(offset), SEEK_SET) != 0) throw Error(ErrorCode::kIo, "cannot seek in '" + path + "'");
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

std::shared_ptr<FileBytes> ReadFile(const std::string& path, int64_t offset, int64_t length) {
  return std::make_shared<VectorBytes>(ReadFileRange(path, offset, length));
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  CheckPathText(path);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(ErrorCode::kIo, "cannot create '" + path + "': " + std::strerror(errno));
  const bool ok = (size == 0 || std::fwrite(data, 1, size, f) == size);
  if (std::fclose(f) != 0 || !ok) throw Error(ErrorCode::kIo, "cannot write '" + path + "'");
}

int64_t FileSize(const std::string& path) {
  CheckPathText(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error(ErrorCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  return int64_t(st.st_size);
}

std::string ConfinedPath(const std::string& dir, const std::string& location, const std::string& what) {
  CheckRelativeLocation(location, what);
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base = fs::canonical(dir.empty() ? fs::path(".") : fs::path(dir), ec);
  if (ec) throw Error(ErrorCode::kIo, what + ": cannot resolve the model's folder '" + dir + "': " + ec.message());
  const fs::path full = fs::canonical(base / fs::path(location), ec);
  if (ec) {
    throw Error(ErrorCode::kIo,
                what + ": cannot open external data '" + location + "' in '" + base.string() + "': " + ec.message());
  }
  // Inside: every component of base is a prefix of full's (after resolving links).
  auto b = base.begin(), f = full.begin();
  for (; b != base.end() && f != full.end() && *b == *f; ++b, ++f) {}
  if (b != base.end()) {
    throw Error(ErrorCode::kInvalidModel, what + ": external data '" + location + "' resolves to '" + full.string() +
                                              "', outside the model's folder '" + base.string() + "'");
  }
  if (!fs::is_regular_file(full, ec)) {
    throw Error(ErrorCode::kInvalidModel, what + ": external data '" + location + "' is not a regular file");
  }
  // (Windows: libstdc++ reports one link for every file, so the refusal cannot apply there.)
  const uintmax_t links = fs::hard_link_count(full, ec);
  if (ec) throw Error(ErrorCode::kIo, what + ": cannot read external data '" + location + "': " + ec.message());
  if (links > 1) {
    throw Error(ErrorCode::kInvalidModel, what + ": external data '" + location + "' has " +
                                              std::to_string(uint64_t(links)) +
                                              " hard links (refused: a hard link may duplicate a file from anywhere)");
  }
  return full.string();
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return path.find('\0') == std::string::npos && std::filesystem::is_directory(path, ec);
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return path.find('\0') == std::string::npos && std::filesystem::is_regular_file(path, ec);
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

void CheckPathText(const std::string& path) {
  if (path.find('\0') == std::string::npos) return;
  std::string shown;
  for (char c : path) shown += c ? std::string(1, c) : std::string("\\0");
  throw Error(ErrorCode::kInvalidArgument, "the path '" + shown + "' holds a NUL character");
}

void CheckRelativeLocation(const std::string& location, const std::string& what) {
  auto refuse = [&](const char* why) {
    throw Error(ErrorCode::kInvalidModel, what + ": external data location '" + location + "' " + why +
                                              " (it must be a relative path inside the model's folder)");
  };
  if (location.empty()) refuse("is empty");
  if (location.find('\0') != std::string::npos) refuse("contains a NUL");
  if (location[0] == '/' || location[0] == '\\') refuse("is absolute");
  if (location.size() >= 2 && location[1] == ':') refuse("names a drive");
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0 && end - start == 2) refuse("has a '..' component");
    start = end + 1;
  }
}

namespace {
#if defined(_WIN32)
constexpr const char* kSeparators = "/\\";
#else
constexpr const char* kSeparators = "/";
#endif
bool IsSeparator(char c) {
#if defined(_WIN32)
  if (c == '\\') return true;
#endif
  return c == '/';
}
}  // namespace

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (IsSeparator(dir.back())) return dir + name;
  return dir + "/" + name;
}

std::string DirName(const std::string& path) {
  const size_t s = path.find_last_of(kSeparators);
  if (s == std::string::npos) return ".";
  if (s == 0) return path.substr(0, 1);
#if defined(_WIN32)
  if (s == 2 && path[1] == ':') return path.substr(0, 3);  // "C:\\model.onnx" -> "C:\\"
#endif
  return path.substr(0, s);
}

}  // namespace onemodel::impl
