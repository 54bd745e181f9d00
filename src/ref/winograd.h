// Winograd F(4x4, 3x3) transforms for fast mode's Conv row "winograd-f4x4"
// (ops/conv/conv_winograd.h; docs/graph-passes.md "Fast passes"): a 3x3 stride-1
// convolution computed per 4x4 output tile as A^T [(G g G^T) o (B^T d B)] A, with d the
// tile's 6x6 input patch (zeros outside the input), g a 3x3 kernel and the products o
// summed over input channels by the GEMM kernels (36 products, one per point xi of the
// 6x6 transform domain). The matrices (Lavin and Gray, points 0, +-1, +-2, inf):
//   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
// These functions define each value's operation order (every vector kernel repeats it
// lane by lane, so every target gives their bits): plain binary32 adds, subtractions and
// multiplications, never fused.
#pragma once

#include <cstdint>

#include "ref/conv.h"
#include "ref/elementwise.h"

namespace onemodel::impl {
namespace ref {

// Tiles: tile (ty, tx) covers outputs rows 4ty .. 4ty+3 and columns 4tx .. 4tx+3 of a
// 3x3, stride-1, dilation-1 convolution of geometry g (g.OH, g.OW its output); TW =
// ceil(OW / 4) tiles per row. Its input patch d[a][b] (a, b < 6) is the input at row
// 4ty - PH + a, column 4tx - PW + b, +0.0 outside the input.
inline int64_t WinogradTileCols(const Conv2DGeometry& g) { return (g.OW + 3) / 4; }
inline int64_t WinogradTileRows(const Conv2DGeometry& g) { return (g.OH + 3) / 4; }

// The input transform V = B^T d B for the tiles of tile rows [ty0, ty1) (all tile columns)
// and channels [c0, c1) of x (channel c's plane at x + c * in_sp): writes
// v[xi * v_mat + t * v_ld + c] for xi = 6 i + j (i, j < 6), t = (ty - ty0) * TW + tx. The
// 1-D step s(d0..d5), applied first along each row of d, then along each column of that:
//   s0 = (4 d0 - 5 d2) + d4        s1 = (d3 + d4) - 4 (d1 + d2)   s2 = (d4 - d3) + 4 (d1 - d2)
//   s3 = (d4 - d2) + 2 (d3 - d1)   s4 = (d4 - d2) - 2 (d3 - d1)   s5 = (4 d1 - 5 d3) + d5
// (each product by 2, 4 or 5 rounded as written, then each sum in the order written).
// Returns whether every input value read is finite (an inf or NaN would spread over a
// tile's outputs: the caller then gives way to another algorithm).
bool WinogradF4InputF32(const float* x, int64_t in_sp, const Conv2DGeometry& g, int64_t ty0, int64_t ty1, int64_t c0,
                        int64_t c1, float* v, int64_t v_ld, int64_t v_mat);

// The output transform Y = A^T m A for the tiles of tile rows [ty0, ty1) and output
// channels [m0, m1): m[xi * m_mat + t * m_ld + oc] holds the channel sums of tile t's
// products (t as above); the 1-D step o(m0..m5), first along each row of m, then along
// each column of that:
//   with s12 = m1 + m2, s34 = m3 + m4, t12 = m1 - m2, t34 = m3 - m4:
//   o0 = (m0 + s12) + s34   o1 = t12 + 2 t34   o2 = s12 + 4 s34   o3 = (t12 + 8 t34) + m5
// then + bias[oc] (bias: null for none) and the activation act, written to
// y[oc * out_sp + oh * OW + ow] for the tile's outputs inside the output.
void WinogradF4OutputF32(const float* m, int64_t m_ld, int64_t m_mat, const Conv2DGeometry& g, int64_t ty0, int64_t ty1,
                         int64_t m0, int64_t m1, const float* bias, Activation act, float* y, int64_t out_sp);

// Row i (0 to 5) of the transformed weights U = G g G^T of weights w ([M][C][3][3],
// row-major): its six points xi = 6 i + j, each value computed in binary64 from the exact
// products and rounded once to binary32: u[j * C * M + c * M + m] (for each xi a C x M
// matrix, the GEMM's B). A row at a time keeps the unpacked copy at a sixth of U.
void WinogradF4Weights(const float* w, int64_t M, int64_t C, int64_t i, float* u);

}  // namespace ref
}  // namespace onemodel::impl
