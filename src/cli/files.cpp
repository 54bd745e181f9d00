// The CLI's file access (see files.h).
#include "files.h"

#include <algorithm>
#include <cstdlib>

#include "onemodel/onemodel.h"

#if defined(__EMSCRIPTEN__)
// The library's wasm build defines these host functions (wasm/files.cpp, EM_JS): imports
// of the module's "env", declared here as EM_JS declares them.
#define OM_HOST(name) __attribute__((import_module("env"), import_name(#name)))
extern "C" {
OM_HOST(om_js_has_fs) int om_js_has_fs();
OM_HOST(om_js_read) int om_js_read(const char* path, double offset, double length, uint8_t** out_ptr, double* out_size);
OM_HOST(om_js_stat) int om_js_stat(const char* path);
OM_HOST(om_js_list) char* om_js_list(const char* path);
OM_HOST(om_js_mkdir) int om_js_mkdir(const char* path);
}
#else
#include <filesystem>
#include <fstream>
#endif

namespace onemodel::cli {
namespace {
// A path holding a NUL would reach the system as the shorter path before it.
bool HasNul(const std::string& path) { return path.find('\0') != std::string::npos; }
void RequireNoNul(const std::string& path) {
  if (!HasNul(path)) return;
  std::string shown;
  for (char c : path) shown += c ? std::string(1, c) : std::string("\\0");
  throw Error(ErrorCode::kInvalidArgument, "the path '" + shown + "' holds a NUL character");
}
}  // namespace

#if defined(__EMSCRIPTEN__)

std::vector<uint8_t> ReadFile(const std::string& path) {
  RequireNoNul(path);
  if (om_js_has_fs() && om_js_stat(path.c_str()) == 1)
    throw Error(ErrorCode::kIo, "cannot read '" + path + "': not a regular file");
  uint8_t* p = nullptr;
  double n = 0;
  if (!om_js_has_fs() || om_js_read(path.c_str(), 0, -1, &p, &n) != 0) {
    throw Error(ErrorCode::kIo, "cannot read '" + path + "'");
  }
  std::vector<uint8_t> v(p, p + size_t(n));
  std::free(p);
  return v;
}

bool IsDirectory(const std::string& path) { return !HasNul(path) && om_js_has_fs() && om_js_stat(path.c_str()) == 1; }

void MakeDirectories(const std::string& path, const std::string& what) {
  RequireNoNul(path);
  if (IsDirectory(path)) return;
  if (!om_js_has_fs() || om_js_mkdir(path.c_str()) != 0)
    throw Error(ErrorCode::kIo, what + ": cannot make the folder '" + path + "'");
}
bool FileExists(const std::string& path) { return !HasNul(path) && om_js_has_fs() && om_js_stat(path.c_str()) == 2; }

std::vector<std::string> ListDirectory(const std::string& path) {
  char* s = om_js_has_fs() ? om_js_list(path.c_str()) : nullptr;
  if (!s) throw Error(ErrorCode::kIo, "cannot list directory '" + path + "'");
  std::string all(s);
  std::free(s);
  std::vector<std::string> out;
  size_t start = 0;
  while (!all.empty() && start <= all.size()) {
    size_t nl = all.find('\n', start);
    if (nl == std::string::npos) nl = all.size();
    out.push_back(all.substr(start, nl - start));
    start = nl + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

#else

std::vector<uint8_t> ReadFile(const std::string& path) {
  RequireNoNul(path);
  std::error_code ec;
  // A folder opens, then fails on the first read (libstdc++ throws from underflow).
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorCode::kIo, "cannot read '" + path + "': not a regular file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::kIo, "cannot read '" + path + "'");
  try {
    std::vector<uint8_t> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) throw Error(ErrorCode::kIo, "cannot read '" + path + "'");
    return v;
  } catch (const std::ios_base::failure& e) {
    throw Error(ErrorCode::kIo, "cannot read '" + path + "': " + e.what());
  }
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return !HasNul(path) && std::filesystem::is_directory(path, ec);
}

void MakeDirectories(const std::string& path, const std::string& what) {
  RequireNoNul(path);
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (!IsDirectory(path))
    throw Error(ErrorCode::kIo, what + ": cannot make the folder '" + path + "'" + (ec ? ": " + ec.message() : ""));
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return !HasNul(path) && std::filesystem::is_regular_file(path, ec);
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> out;
  for (auto it = std::filesystem::directory_iterator(path, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  if (ec) throw Error(ErrorCode::kIo, "cannot list directory '" + path + "': " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

#endif

namespace {
bool IsSeparator(char c) {
#if defined(_WIN32)
  if (c == '\\') return true;
#endif
  return c == '/';
}
}  // namespace

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return IsSeparator(dir.back()) ? dir + name : dir + "/" + name;
}

bool IsAbsolutePath(const std::string& path) {
  if (!path.empty() && IsSeparator(path[0])) return true;
#if defined(_WIN32)
  const char d = path.empty() ? '\0' : path[0];
  if (((d >= 'A' && d <= 'Z') || (d >= 'a' && d <= 'z')) && path.size() >= 3 && path[1] == ':' && IsSeparator(path[2]))
    return true;
#endif
  return false;
}

std::string BaseName(const std::string& path) {
  size_t start = 0;
  for (size_t i = 0; i < path.size(); ++i)
    if (IsSeparator(path[i])) start = i + 1;
  return path.substr(start);
}

}  // namespace onemodel::cli
