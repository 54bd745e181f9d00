// The golden hash of exact-contract section 8: SHA-256 over each output's element type,
// rank, dimensions (little-endian int64) and row-major little-endian elements, with
// NaNs canonical; several outputs hash the concatenation of their serialisations.
#pragma once

#include <string>
#include <vector>

#include "core/sha256.h"
#include "core/tensor.h"

namespace onemodel::impl {

// Appends one tensor's canonical serialisation to the running hash.
void GoldenSerialize(const Tensor& t, Sha256& hash);
// Rewrites every NaN of a floating-point tensor (float, double, complex, float16,
// bfloat16, float8) as its type's canonical quiet NaN, the one golden hashes use: every
// NaN leaving a session is canonical (docs/exact-mode.md). A tensor whose buffer is shared
// or borrowed is copied first. Returns whether any element changed.
bool CanonicalizeNaNs(Tensor& t);

// Returns the hex digest over the tensors, in order.
std::string GoldenHash(const std::vector<Tensor>& outputs);

// Values that are not tensors (decision, docs/exact-mode.md): a sequence serialises as
// int64 -2, its length, then each tensor; an empty optional as int64 -3.
void GoldenSerializeSequence(const std::vector<Tensor>& seq, Sha256& hash);
void GoldenSerializeEmptyOptional(Sha256& hash);

// Returns SHA-256 of the ASCII text "onemodel:skipped": the marker a row prints for a
// case it cannot run in exact mode, so that skips compare across rows like results.
std::string GoldenSkipMarker();

}  // namespace onemodel::impl
