// The helpers CANN samples keep in their own data_utils.h (ReadFile / WriteFile of raw .bin data,
// INFO_LOG / ERROR_LOG, CHECK_ACL), for CPU-debug programs that include "data_utils.h" without shipping
// one; a sample's own data_utils.h, next to its sources, is found first and wins.
#pragma once
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) std::fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define WARN_LOG(fmt, ...) std::fprintf(stdout, "[WARN]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) std::fprintf(stdout, "[ERROR]  " fmt "\n", ##__VA_ARGS__)
#define CHECK_ACL(x)                                                                      \
  do {                                                                                    \
    aclError opkit_ret_ = (x);                                                            \
    if (opkit_ret_ != ACL_ERROR_NONE)                                                     \
      std::cerr << __FILE__ << ":" << __LINE__ << " aclError:" << opkit_ret_ << std::endl; \
  } while (0)

// Reads up to bufferSize bytes of filePath into buffer; fileSize gets the file's size.
inline bool ReadFile(const std::string& filePath, size_t& fileSize, void* buffer, size_t bufferSize) {
  std::ifstream f(filePath, std::ios::binary | std::ios::ate);
  if (!f) { ERROR_LOG("cannot open %s", filePath.c_str()); return false; }
  const size_t size = static_cast<size_t>(f.tellg());
  if (size > bufferSize) { ERROR_LOG("%s: %zu bytes do not fit the %zu-byte buffer", filePath.c_str(), size, bufferSize); return false; }
  f.seekg(0);
  f.read(static_cast<char*>(buffer), static_cast<std::streamsize>(size));
  fileSize = size;
  return static_cast<bool>(f);
}
// Callers that pass a constant or a temporary size.
inline bool ReadFile(const std::string& filePath, const size_t& fileSize, void* buffer, size_t bufferSize) {
  size_t n = fileSize;
  return ReadFile(filePath, n, buffer, bufferSize);
}
inline bool WriteFile(const std::string& filePath, const void* buffer, size_t size) {
  std::ofstream f(filePath, std::ios::binary | std::ios::trunc);
  if (!f) { ERROR_LOG("cannot write %s", filePath.c_str()); return false; }
  f.write(static_cast<const char*>(buffer), static_cast<std::streamsize>(size));
  return static_cast<bool>(f);
}
