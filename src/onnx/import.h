// ONNX import: model bytes -> the graph IR, with a typed error for every problem
// (not a protobuf, truncated, unsupported IR or opset, dangling names, cycles, ...).
#pragma once

#include <memory>
#include <string>

#include "core/limits.h"
#include "graph/graph.h"
#include "onnx/tensor_proto.h"

namespace onemodel::impl {

constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 13;     // ONNX 1.22 writes up to IR 13
constexpr int64_t kMaxDefaultOpset = 28;  // the ai.onnx opsets of onnx's main branch (ONNX 1.22: 27)
constexpr int64_t kMaxMlOpset = 5;        // ai.onnx.ml

// Imports a model. `origin` names it in messages; `model_dir` (may be empty) is where
// external data files are read from. `owner` keeps `data` alive when tensors borrow it
// (may be null: then nothing borrows the caller's bytes).
// `limits`: max_model_bytes (with the external data), max_graph_depth, max_nodes
// (kLimitExceeded naming the limit; max_tensor_bytes is the thread's LimitScope's).
Model ImportModel(const uint8_t* data, size_t size, const std::string& origin, const std::string& model_dir,
                  const Limits& limits = Limits());
// The same with external data from `external` (files given as bytes, then its folder).
Model ImportModel(const uint8_t* data, size_t size, const std::string& origin, const ExternalSource& external,
                  const Limits& limits = Limits());

// Reads and imports a model file (its size checked against max_model_bytes first);
// external data from `given` first, then the model's folder.
Model LoadModelFile(const std::string& path, const Limits& limits = Limits(),
                    const std::map<std::string, ExternalBytes>& given = {});

}  // namespace onemodel::impl
