// File access for the CLI (not the library's: the CLI sits on the public API only).
// Native: the C++ library. wasm: the host's file bridge that the library's wasm build
// defines (om_js_* in core/io.cpp: node's fs, or a page's in-memory file table).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onemodel::cli {

// The file's bytes; throws onemodel::Error (kIo) naming the path.
std::vector<uint8_t> ReadFile(const std::string& path);
bool IsDirectory(const std::string& path);
// Makes the folder and its missing parents (nothing when it exists); kIo naming `what`
// and the path when it cannot (a file is in the way, no permission, no file system).
void MakeDirectories(const std::string& path, const std::string& what);
bool FileExists(const std::string& path);
// Entry names (not paths), sorted by byte value; kIo when path is not a directory.
std::vector<std::string> ListDirectory(const std::string& path);
// '/' separates on every host; on Windows '\\' too, and "C:\\" or "C:/" starts an absolute
// path.
std::string JoinPath(const std::string& dir, const std::string& name);
bool IsAbsolutePath(const std::string& path);
// The last component of path (after its last separator, as JoinPath's); path when it has none.
std::string BaseName(const std::string& path);

}  // namespace onemodel::cli
