// NumPy .npy (format 1-3, little-endian, C order) read and write for the tools scripts.
import fs from 'node:fs';

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array],
  '<u2': ['uint16', Uint16Array], '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array],
  '<i8': ['int64', BigInt64Array], '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

// Returns { type, dims, data } with data a typed array over a copy of the payload.
export function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order is not supported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const dt = DTYPES[descr];
  if (!dt) throw new Error(`${path}: dtype ${descr} is not supported`);
  const start = hstart + hlen;
  const bytes = buf.subarray(start);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const data = new dt[1](copy.buffer, 0, bytes.length / dt[1].BYTES_PER_ELEMENT);
  return { type: dt[0], dims: shape, data };
}

export function writeNpy(path, type, dims, data) {
  const descr = Object.keys(DTYPES).find((k) => DTYPES[k][0] === type);
  if (!descr) throw new Error(`writeNpy: type ${type} is not supported`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

// float16 bits to a JS number.
export function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}
