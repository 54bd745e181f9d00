// Graph passes that exact mode may run: each leaves every output bit for bit as the
// oracle computes it (exact-contract section 7). docs/graph-passes.md lists them with
// the argument for each. The fast-mode passes at the end may change bits within a stated
// bound; exact sessions never run them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "ops/fused/fused.h"

namespace onemodel::impl {

// Conv -> Relu and Conv -> HardSwish (float), where the activation is the Conv output's
// only reader and that output is not a graph output: the activation node goes and the
// Conv applies the same function to each result after the bias. Returns the number of
// nodes fused. Top-level graph only.
int FuseConvActivation(Graph& g);

// Regions of elementwise nodes whose values are all read inside the region, except the
// value of its last node (which may be read anywhere; the region's values may be read
// by several of its nodes, as in x * clip(x + 3, 0, 6) / 6): the region becomes one
// onemodel.ElementwiseChain node whose "body" attribute holds the original nodes. It
// runs the same kernels on each chunk of the data in turn (same operations, same order,
// same bits) in one pass over memory, or, for inputs it cannot run that way (not float,
// a broadcast that is not a single element), the body node by node. Returns the number
// of regions. Top-level graph only.
int FuseElementwiseChains(Graph& g);

// Scaled dot-product attention: MatMul(Q, K^T) -> optional Div or Mul (the scale) ->
// optional Add (the mask) -> Softmax (last axis) -> MatMul(., V), each value read only by
// the next, with the Transposes that make Q, K^T and V and the one that reads the result
// (when nothing else reads theirs): one onemodel.SoftmaxAttention node whose "body"
// attribute holds the original nodes. It computes per (batch, block of query rows) with
// the same kernels on the same values in the same order (same bits), the scores in a
// per-thread buffer and the Transposes as strides; inputs it cannot run that way (not
// float, broadcast batches, a mask or scale that widens the scores) run the body node by
// node. opsets: the model's (Softmax's default axis). Returns the number fused. Top-level
// graph only.
int FuseAttention(Graph& g, const std::map<std::string, int64_t>& opsets);

// QuantizeLinear -> DequantizeLinear where the quantised tensor is read by nothing else
// (not a graph output, no other node or subgraph): the pair becomes one
// onemodel.QuantizeDequantize node (inputs: Q's X, then Q's and DQ's other inputs; its
// "body" attribute holds the two nodes). With float X and single-value parameters it
// quantises and dequantises each element in one pass (the reference's two formulas in
// turn, the byte never stored); otherwise the body runs node by node. Returns the number
// of pairs. Top-level graph only.
int FuseQuantizeDequantize(Graph& g);

// DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W, A_zp[, W_zp]) -> Cast(to float) ->
// Mul(., Mul(A_scale, W_scale)), the shape tools/quantize.py and ONNX Runtime's dynamic
// quantiser give a MatMul, each inner value read once by the next node (no graph output),
// with an Add of a rank-1 constant float initializer (the bias) when it alone reads the
// product: one onemodel.DynamicQuantMatMul node whose "body" attribute holds the original
// nodes (ops/quant/quant.cpp). It quantises A, writes the int32 sums into its output's
// buffer and converts them in place, the same operations in the same order (same bits);
// inputs it cannot run that way run the body node by node. Returns the number fused.
// Top-level graph only.
int FuseDynamicQuantMatMul(Graph& g);

// A onemodel.QuantizeDequantize whose X is a Conv output read by nothing else, with
// per-tensor constant parameters (initializers no feed replaces) and a Conv whose input
// is float whatever is fed (a float graph input or initializer, or a DequantizeLinear's
// output): the node goes and the Conv applies the same quantisation and dequantisation to
// its results (Node::fusion, graph/graph.h), after its bias and
// activation, in place. Run after FuseConvActivation. Returns the number fused. Top-level
// graph only.
int FuseConvQuantizeDequantize(Graph& g);

// Conv -> Add (-> Relu): an Add with a Conv's result as one operand, that result read by
// nothing else, the Conv without a fused quantisation: the Add (and a Relu that alone
// reads the sum) goes, and the Conv takes the other operand Z as its input 3 and runs in
// the Add's place (Z may be made after the Conv). Its fusion record (Node::fusion,
// graph/graph.h) names the Add's operand order and the Relu; each result is finished
// (bias, the Conv's own activation), then + Z, then Relu, the same roundings in the same
// order, in the tiles where the algorithm allows (ops/conv/conv.cpp). When Z is not a
// float tensor of the result's shape the Add and Relu run as nodes. Run after
// FuseConvQuantizeDequantize. Returns the number fused. Top-level graph only.
int FuseConvResidual(Graph& g);

// How many times each value of g is read: node inputs (a node reading a value twice
// counts twice), subgraphs' outer references, and graph outputs (counted as 2, so an
// output never looks read once). Shared by the passes.
std::unordered_map<std::string, int> CountReaders(const Graph& g);
// The index of the node producing each value of g.
std::unordered_map<std::string, size_t> ProducerIndex(const Graph& g);
// Removes the nodes whose index is marked in drop (the others keep their order).
void EraseNodes(Graph& g, const std::vector<bool>& drop);
// Removes the nodes marked in drop and puts each fused node (index of its last member,
// the node) in its last member's place: its operands all exist by then, so the graph
// stays topologically sorted.
void PlaceFused(Graph& g, const std::vector<bool>& drop, std::vector<std::pair<size_t, Node>>& fused_at);
// A fused node of OneModel's domain holding `nodes` (in order) in its "body" attribute:
// its inputs are every non-empty input of those nodes that none of them produces, each
// once, in order of first use (the body's inputs by the same names); its one output
// (and the body's) is `output`.
Node FusedNode(const char* op_type, const std::string& name, const std::vector<const Node*>& nodes,
               const std::string& output);

// Constant folding: a node whose inputs are all constants (initializers that are not
// also graph inputs, so no feed can replace them, and outputs of nodes folded before)
// runs once with its reference kernel, and its outputs become initializers; the node
// goes. Left alone: random operators, nodes with subgraphs, model-local functions, nodes
// that produce a graph output or a non-tensor, nodes that fail (the run reports it), and
// results larger than four times their inputs plus 1 MiB. Folded values that nothing
// reads afterwards are dropped. opsets: the model's (domain -> version). Returns the
// number of nodes folded. Top-level graph only.
int FoldConstants(Graph& g, const std::map<std::string, int64_t>& opsets);

// Runs the exact-mode passes on g; returns the number of rewrites.
int RunExactPasses(Graph& g, const std::map<std::string, int64_t>& opsets,
                   const std::vector<std::string>& disabled = {});
// The names RunExactPasses knows, in the order it runs them.
const std::vector<std::string>& ExactPassNames();

// --- Fast-mode passes (SessionOptions::mode kFast only): each may change output bits,
// within the bound docs/graph-passes.md ("Fast passes") states for it. ---

// Conv nodes (2-D, float) whose input is the output of a quantisation then dequantisation
// with single constant parameters (a onemodel.QuantizeDequantize, or a Conv with a fused
// one), or of a DequantizeLinear of an 8-bit tensor with a single constant scale and zero
// point, get that grid in Node::fusion (in_grid, grid): their plans may then take the Conv
// family's fast integer row ("qdq-u8s8", ops/conv/conv_int8.cpp). Changes no node or
// value. Run after the exact passes. Returns the number of nodes marked.
int MarkConvInputGrids(Graph& g);

// Conv -> BatchNormalization (inference: no training mode, one output), the Conv's
// result read by nothing else, the Conv without fusions, its weights, bias (if any) and
// the four statistics constant float initializers (no feed replaces them), one value per
// output channel: the BatchNormalization goes and the Conv takes weights W s and bias
// (b - mean) s + B, s = scale / sqrt(var + epsilon), computed in binary64 and rounded
// once each (new initializers; those nothing reads any more are dropped). Any value not
// finite leaves the pair as it is. Returns the number folded. Top-level graph only.
int FoldConvBatchNorm(Graph& g);

// Div(x, c) with c a constant float initializer of one element (no feed replaces it)
// whose reciprocal r = 1 / c (rounded once) is a normal float becomes Mul(x, r) (a new
// initializer of c's shape, one per divisor): a multiplication instead of a division,
// one rounding more. Returns the number of nodes changed. Top-level graph only.
int DivToReciprocalMul(Graph& g);

// The fast passes that change the graph's nodes, run before RunExactPasses so that its
// fusions see the result (a Conv -> BatchNormalization -> Relu becomes a Conv with a fused
// Relu; a GELU's Div by sqrt(2) is a Mul inside its elementwise chain): constant folding,
// then FoldConvBatchNorm and DivToReciprocalMul. Returns the number of rewrites.
int RunFastGraphPasses(Graph& g, const std::map<std::string, int64_t>& opsets,
                       const std::vector<std::string>& disabled = {});
// Runs the fast passes on g (after RunExactPasses); returns the number of rewrites.
int RunFastPasses(Graph& g, const std::vector<std::string>& disabled = {});
// The names RunFastGraphPasses and RunFastPasses know, in the order they run them.
const std::vector<std::string>& FastPassNames();

}  // namespace onemodel::impl
