// File access for the loader and the CLIs: native through the C++ library, wasm under
// node through node's fs (reading straight into wasm memory), nowhere in a browser
// (there, callers pass bytes). Errors are kIo naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace onemodel::impl {

// Bytes read from a file; data() stays valid while the object lives.
class FileBytes {
 public:
  virtual ~FileBytes() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

// A kInvalidArgument error when path holds a NUL character (the system would read it as
// the shorter path before the NUL); the file functions below call it.
void CheckPathText(const std::string& path);
// Reads [offset, offset + length) of a file (length -1: to the end) into one buffer.
std::shared_ptr<FileBytes> ReadFile(const std::string& path, int64_t offset = 0, int64_t length = -1);
// Reads [offset, offset + length) of a file (length -1: to the end).
std::vector<uint8_t> ReadFileRange(const std::string& path, int64_t offset, int64_t length);
// Creates or replaces the file at path with [data, data + size).
void WriteFile(const std::string& path, const uint8_t* data, size_t size);
// IsDirectory and FileExists: false for a path holding a NUL.
bool IsDirectory(const std::string& path);
// A file's size in bytes; -1 when it cannot be known without reading it.
int64_t FileSize(const std::string& path);
// The path of `location` (an external-data reference) inside folder `dir`, or a
// kInvalidModel error naming `what` when it leaves the folder: empty, absolute, a ".."
// component, a NUL, a symbolic link resolving outside `dir` (native), not a regular
// file, or a file with more than one hard link (native: a hard link is indistinguishable
// from the file it duplicates, wherever that lives).
std::string ConfinedPath(const std::string& dir, const std::string& location, const std::string& what);
// The lexical part of that check (shared by the native and wasm builds).
void CheckRelativeLocation(const std::string& location, const std::string& what);
bool FileExists(const std::string& path);
// Entry names (not paths) in a directory, sorted by byte value.
std::vector<std::string> ListDirectory(const std::string& path);
// Paths: '/' separates on every host, and on Windows '\\' too.
std::string JoinPath(const std::string& dir, const std::string& name);
std::string DirName(const std::string& path);

}  // namespace onemodel::impl
