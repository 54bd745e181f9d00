// The wasm build's file access (core/io.h): a bridge to the host through EM_JS, since
// a wasm module has no files of its own. The native versions are in src/core/io.cpp.
#include <emscripten.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/io.h"

namespace onemodel::impl {

// The EM_JS bodies are JavaScript: clang-format leaves them alone.
// clang-format off

// Files reached from the wasm module: node's fs, or, where there is none (a browser
// page), the in-memory table a caller puts in Module.onemodelFiles (a Map from path to
// Uint8Array; js/browser.mjs fills it). With neither, these report "no file system".
EM_JS(int, om_js_has_fs, (), {
  if (Module['onemodelFiles']) return 1;
  return (typeof process !== 'undefined' && process.versions && process.versions.node) ? 1 : 0;
});
// Reads [offset, offset+length) (length < 0: to the end) into a malloc'ed buffer;
// stores the pointer and size; returns 0, or -1 on error.
EM_JS(int, om_js_read, (const char* path, double offset, double length, uint8_t** out_ptr, double* out_size), {
  try {
    const p = UTF8ToString(path);
    const table = Module['onemodelFiles'];
    if (table) {
      const bytes = table.get(p);
      if (!bytes) return -1;
      const start = Math.min(offset, bytes.length);
      const n = length < 0 ? bytes.length - start : Math.min(length, bytes.length - start);
      const ptr = _malloc(Math.max(n, 1)) >>> 0;
      if (!ptr) return -1;
      HEAPU8.set(bytes.subarray(start, start + n), ptr);
      HEAPU32[(out_ptr >>> 0) >>> 2] = ptr;
      HEAPF64[(out_size >>> 0) >>> 3] = n;
      return 0;
    }
    const fs = require('fs');
    const fd = fs.openSync(p, 'r');
    try {
      const total = fs.fstatSync(fd).size;
      const start = Math.min(offset, total);
      const n = length < 0 ? total - start : Math.min(length, total - start);
      // Pointers above 2 GiB arrive as negative numbers: read them unsigned (>>> 0).
      // malloc grows its free top in one signed 32-bit step, and a failed growth leaves it
      // unable to grow past there again: above 1 GiB, grow it in 1 GiB steps first.
      let grown = true;
      for (let step = 2 ** 30; grown && step < n; step += 2 ** 30) {
        const q = _malloc(step) >>> 0;
        if (q) _free(q);
        grown = q !== 0;
      }
      const ptr = grown ? _malloc(Math.max(n, 1)) >>> 0 : 0;
      if (!ptr) return -1;
      let done = 0;
      while (done < n) {
        const chunk = Math.min(n - done, 1 << 28);
        const got = fs.readSync(fd, HEAPU8, ptr + done, chunk, start + done);
        if (got <= 0) break;
        done += got;
      }
      HEAPU32[(out_ptr >>> 0) >>> 2] = ptr;
      HEAPF64[(out_size >>> 0) >>> 3] = done;
      return 0;
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    return -1;
  }
});
// Makes the folder path and its missing parents (the CLI's --save); 0, or -1 on error.
// A page's file table has no folders: nothing to make.
EM_JS(int, om_js_mkdir, (const char* path), {
  try {
    if (Module['onemodelFiles']) return 0;
    require('fs').mkdirSync(UTF8ToString(path), {recursive: true});
    return 0;
  } catch (e) {
    return -1;
  }
});
// Writes [data, data+size) to a new file at path; 0, or -1 on error.
EM_JS(int, om_js_write, (const char* path, const uint8_t* data, double size), {
  try {
    const p = data >>> 0;
    const table = Module['onemodelFiles'];
    if (table) {
      table.set(UTF8ToString(path), HEAPU8.slice(p, p + size));
      return 0;
    }
    require('fs').writeFileSync(UTF8ToString(path), HEAPU8.subarray(p, p + size));
    return 0;
  } catch (e) {
    return -1;
  }
});
// 1 directory, 2 file, 0 missing. In the table, a directory is a prefix of a path.
// External data confinement under node: 0 when `rel` inside `dir` resolves (links
// followed) to a regular file inside dir with one hard link; else 1 outside, 2 not a
// regular file, 3 more than one hard link, 4 cannot be resolved. A browser's table has
// no links: 0 when the path is in it.
EM_JS(int, om_js_confined, (const char* dir, const char* rel, double* out_size), {
  try {
    const d = UTF8ToString(dir), r = UTF8ToString(rel);
    const table = Module['onemodelFiles'];
    if (table) {
      const key = d ? (d.endsWith('/') ? d + r : d + '/' + r) : r;
      const bytes = table.get(key);
      if (!bytes) return 4;
      HEAPF64[(out_size >>> 0) >>> 3] = bytes.length;
      return 0;
    }
    const fs = require('fs'), path = require('path');
    const base = fs.realpathSync(d || '.');
    const full = fs.realpathSync(path.join(base, r));
    if (full === base) return 2;
    if (!(full.startsWith(base.endsWith(path.sep) ? base : base + path.sep))) return 1;
    const st = fs.statSync(full);
    if (!st.isFile()) return 2;
    if (st.nlink > 1) return 3;
    HEAPF64[(out_size >>> 0) >>> 3] = st.size;
    return 0;
  } catch (e) {
    return 4;
  }
});
// A file's size, or -1.
EM_JS(double, om_js_size, (const char* path), {
  try {
    const p = UTF8ToString(path);
    const table = Module['onemodelFiles'];
    if (table) return table.has(p) ? table.get(p).length : -1;
    return require('fs').statSync(p).size;
  } catch (e) {
    return -1;
  }
});
EM_JS(int, om_js_stat, (const char* path), {
  try {
    const p = UTF8ToString(path);
    const table = Module['onemodelFiles'];
    if (table) {
      if (table.has(p)) return 2;
      const dir = p.endsWith('/') ? p : p + '/';
      for (const k of table.keys()) if (k.startsWith(dir)) return 1;
      return 0;
    }
    const st = require('fs').statSync(p);
    return st.isDirectory() ? 1 : 2;
  } catch (e) {
    return 0;
  }
});
// Newline-separated entry names in a malloc'ed C string, or 0.
EM_JS(char*, om_js_list, (const char* path), {
  try {
    const p = UTF8ToString(path);
    const table = Module['onemodelFiles'];
    let names;
    if (table) {
      const dir = p.endsWith('/') ? p : p + '/';
      const set = new Set();
      for (const k of table.keys()) if (k.startsWith(dir)) set.add(k.slice(dir.length).split('/')[0]);
      if (!set.size) return 0;
      names = [...set].join('\n');
    } else {
      names = require('fs').readdirSync(p).join('\n');
    }
    const n = lengthBytesUTF8(names) + 1;
    const ptr = _malloc(n);
    stringToUTF8(names, ptr, n);
    return ptr;
  } catch (e) {
    return 0;
  }
});

namespace {
class MallocBytes : public FileBytes {
 public:
  MallocBytes(uint8_t* p, size_t n) : p_(p), n_(n) {}
  ~MallocBytes() override { std::free(p_); }
  const uint8_t* data() const override { return p_; }
  size_t size() const override { return n_; }

 private:
  uint8_t* p_;
  size_t n_;
};
bool HasNoNul(const std::string& path) { return path.find('\0') == std::string::npos; }
void RequireFs() {
  if (!om_js_has_fs()) throw Error(ErrorCode::kIo, "no file system in this environment: pass the model's bytes");
}
std::shared_ptr<MallocBytes> JsRead(const std::string& path, int64_t offset, int64_t length) {
  CheckPathText(path);
  RequireFs();
  if (om_js_stat(path.c_str()) == 1) throw Error(ErrorCode::kIo, "cannot read '" + path + "': not a regular file");
  uint8_t* p = nullptr;
  double n = 0;
  if (om_js_read(path.c_str(), double(offset), double(length), &p, &n) != 0) {
    throw Error(ErrorCode::kIo, "cannot read '" + path + "'");
  }
  return std::make_shared<MallocBytes>(p, size_t(n));
}
}  // namespace

std::shared_ptr<FileBytes> ReadFile(const std::string& path, int64_t offset, int64_t length) {
  return JsRead(path, offset, length);
}

std::vector<uint8_t> ReadFileRange(const std::string& path, int64_t offset, int64_t length) {
  auto b = JsRead(path, offset, length);
  return std::vector<uint8_t>(b->data(), b->data() + b->size());
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  CheckPathText(path);
  RequireFs();
  if (om_js_write(path.c_str(), data, double(size)) != 0) throw Error(ErrorCode::kIo, "cannot write '" + path + "'");
}

int64_t FileSize(const std::string& path) {
  CheckPathText(path);
  return om_js_has_fs() ? int64_t(om_js_size(path.c_str())) : -1;
}

std::string ConfinedPath(const std::string& dir, const std::string& location, const std::string& what) {
  CheckRelativeLocation(location, what);
  RequireFs();
  double size = -1;
  switch (om_js_confined(dir.c_str(), location.c_str(), &size)) {
    case 0: return JoinPath(dir, location);
    case 1:
      throw Error(ErrorCode::kInvalidModel,
                  what + ": external data '" + location + "' resolves outside the model's folder '" + dir + "'");
    case 2: throw Error(ErrorCode::kInvalidModel, what + ": external data '" + location + "' is not a regular file");
    case 3:
      throw Error(ErrorCode::kInvalidModel, what + ": external data '" + location +
                                                "' has more than one hard link (refused: a hard link may duplicate a "
                                                "file from anywhere)");
    default:
      throw Error(ErrorCode::kIo, what + ": cannot open external data '" + location + "' in '" + dir + "'");
  }
}

bool IsDirectory(const std::string& path) { return HasNoNul(path) && om_js_has_fs() && om_js_stat(path.c_str()) == 1; }
bool FileExists(const std::string& path) { return HasNoNul(path) && om_js_has_fs() && om_js_stat(path.c_str()) == 2; }

std::vector<std::string> ListDirectory(const std::string& path) {
  RequireFs();
  char* s = om_js_list(path.c_str());
  if (!s) throw Error(ErrorCode::kIo, "cannot list directory '" + path + "'");
  std::vector<std::string> out;
  std::string all(s);
  std::free(s);
  size_t start = 0;
  while (start <= all.size() && !all.empty()) {
    size_t nl = all.find('\n', start);
    if (nl == std::string::npos) nl = all.size();
    out.push_back(all.substr(start, nl - start));
    start = nl + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

// clang-format on

}  // namespace onemodel::impl
