// Rewrites the relaxed-SIMD fused multiply-adds that Emscripten 3.1.6's clang 14 emits
// (the proposal's provisional opcodes: f32x4.fma 0xfd 0xaf, f32x4.fms 0xfd 0xb0) to the
// standard ones (f32x4.relaxed_madd 0xfd 0x105: a * b + c; f32x4.relaxed_nmadd 0xfd 0x106:
// -(a * b) + c), which engines accept (Chromium 114+, Firefox 120+, node 22+ or node 20
// with --experimental-wasm-relaxed-simd). Both encode in two LEB bytes, so the rewrite is in
// place: the code section is walked instruction by instruction (an opcode byte can also be
// an immediate's), every other relaxed-SIMD prototype opcode is an error (none is used:
// src/kernels/fma_v.h is the only user of the builtins).
//
// Usage: node tools/lib/wasm_relaxed.mjs FILE.wasm   (rewrites FILE.wasm; prints the count)
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const REWRITE = new Map([
  [0xaf, 0x105],  // f32x4.fma -> f32x4.relaxed_madd
  [0xb0, 0x106],  // f32x4.fms -> f32x4.relaxed_nmadd
]);
// The other SIMD opcodes below 0x100 that the standard leaves unassigned (clang 14's
// relaxed-SIMD prototypes and removed experiments live there): refused.
const UNASSIGNED = new Set([0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb, 0xc2, 0xc5, 0xc6, 0xcf, 0xd0,
  0xd2, 0xd3, 0xd4, 0xe2, 0xee]);

class Reader {
  constructor(bytes, pos, end) { this.b = bytes; this.p = pos; this.end = end; }
  byte() {
    if (this.p >= this.end) throw new Error(`wasm_relaxed: read past the end at ${this.p}`);
    return this.b[this.p++];
  }
  u32() {
    let v = 0, shift = 0, x;
    do { x = this.byte(); v += (x & 0x7f) * 2 ** shift; shift += 7; } while (x & 0x80);
    return v;
  }
  sleb() { let x; do { x = this.byte(); } while (x & 0x80); }
  skip(n) { this.p += n; if (this.p > this.end) throw new Error('wasm_relaxed: immediate past the end'); }
  memarg() { this.u32(); this.u32(); }
  blocktype() {
    const x = this.b[this.p];
    if (x === 0x40 || (x >= 0x6f && x <= 0x7f)) this.p++;
    else this.sleb();
  }
}

// Walks one function body's instructions [pos, end); returns the rewrites made.
function walkBody(bytes, pos, end, stats) {
  const r = new Reader(bytes, pos, end);
  const groups = r.u32();
  for (let i = 0; i < groups; ++i) { r.u32(); r.byte(); }  // count, value type
  while (r.p < end) {
    const op = r.byte();
    if (op === 0x02 || op === 0x03 || op === 0x04 || op === 0x06) r.blocktype();
    else if (op === 0x07 || op === 0x08 || op === 0x09 || op === 0x0c || op === 0x0d || op === 0x18) r.u32();
    else if (op === 0x0e) { const n = r.u32(); for (let i = 0; i <= n; ++i) r.u32(); }
    else if (op === 0x10 || op === 0x12) r.u32();
    else if (op === 0x11 || op === 0x13) { r.u32(); r.u32(); }
    else if (op === 0x1c) { const n = r.u32(); r.skip(n); }
    else if (op >= 0x20 && op <= 0x26) r.u32();
    else if (op >= 0x28 && op <= 0x3e) r.memarg();
    else if (op === 0x3f || op === 0x40) r.byte();
    else if (op === 0x41 || op === 0x42) r.sleb();
    else if (op === 0x43) r.skip(4);
    else if (op === 0x44) r.skip(8);
    else if (op === 0xd0) r.byte();
    else if (op === 0xd2) r.u32();
    else if (op === 0xfc) {
      const sub = r.u32();
      if (sub <= 7) { /* saturating truncations */ }
      else if (sub === 8) { r.u32(); r.byte(); }
      else if (sub === 9 || sub === 13 || (sub >= 15 && sub <= 17)) r.u32();
      else if (sub === 10) { r.byte(); r.byte(); }
      else if (sub === 11) r.byte();
      else if (sub === 12 || sub === 14) { r.u32(); r.u32(); }
      else throw new Error(`wasm_relaxed: unknown 0xfc ${sub} at ${r.p}`);
    } else if (op === 0xfd) {
      const at = r.p;
      const sub = r.u32();
      if (sub <= 11 || sub === 92 || sub === 93) r.memarg();
      else if (sub === 12 || sub === 13) r.skip(16);
      else if (sub >= 21 && sub <= 34) r.byte();
      else if (sub >= 84 && sub <= 91) { r.memarg(); r.byte(); }
      else if (REWRITE.has(sub)) {
        if (r.p - at !== 2) throw new Error(`wasm_relaxed: opcode ${sub} not in two bytes at ${at}`);
        const to = REWRITE.get(sub);
        bytes[at] = 0x80 | (to & 0x7f);
        bytes[at + 1] = to >> 7;
        stats[sub] = (stats[sub] || 0) + 1;
      } else if (UNASSIGNED.has(sub) || sub >= 0x100) {
        throw new Error(`wasm_relaxed: SIMD opcode 0x${sub.toString(16)} at ${at} is not one this tool maps`);
      }
    } else if (op === 0xfe) {
      const sub = r.u32();
      if (sub === 3) r.byte();
      else r.memarg();
    }
    // Every other opcode has no immediate.
  }
  if (r.p !== end) throw new Error('wasm_relaxed: a body ends inside an instruction');
}

// Rewrites `bytes` (a Uint8Array of a whole module) in place; returns the rewrites by
// prototype opcode.
export function rewriteRelaxed(bytes) {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d)
    throw new Error('wasm_relaxed: not a wasm module');
  const stats = {};
  const r = new Reader(bytes, 8, bytes.length);
  while (r.p < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    const start = r.p, end = start + size;
    if (id === 10) {
      const body = new Reader(bytes, start, end);
      const count = body.u32();
      for (let i = 0; i < count; ++i) {
        const len = body.u32();
        walkBody(bytes, body.p, body.p + len, stats);
        body.p += len;
      }
    }
    r.p = end;
  }
  return stats;
}

if (import.meta.url === pathToFileURL(process.argv[1] || '').href) {
  const file = process.argv[2];
  if (!file) { console.error('usage: node tools/lib/wasm_relaxed.mjs FILE.wasm'); process.exit(2); }
  const bytes = new Uint8Array(readFileSync(file));
  const stats = rewriteRelaxed(bytes);
  writeFileSync(file, bytes);
  console.log(`wasm_relaxed: ${file}: ${stats[0xaf] || 0} f32x4.relaxed_madd, ${stats[0xb0] || 0} f32x4.relaxed_nmadd`);
}
