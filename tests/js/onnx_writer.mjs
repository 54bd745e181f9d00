// A small ONNX model writer for the JS tests (protobuf wire format by hand; the field
// numbers are onnx.proto's), the counterpart of tests/api/onnx_writer.h.
class Msg {
  constructor() { this.parts = []; }
  varint(field, v) { this.key(field, 0); this.putVarint(BigInt(v)); return this; }
  bytes(field, b) {
    const u = typeof b === 'string' ? new TextEncoder().encode(b) : b;
    this.key(field, 2); this.putVarint(BigInt(u.length)); this.parts.push(u); return this;
  }
  sub(field, m) { return this.bytes(field, m.toBytes()); }
  key(field, wire) { this.putVarint((BigInt(field) << 3n) | BigInt(wire)); }
  putVarint(v) {
    const out = [];
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) { out.push(Number(x & 0x7fn) | 0x80); x >>= 7n; }
    out.push(Number(x));
    this.parts.push(Uint8Array.from(out));
  }
  toBytes() {
    const n = this.parts.reduce((a, p) => a + p.length, 0);
    const u = new Uint8Array(n);
    let at = 0;
    for (const p of this.parts) { u.set(p, at); at += p.length; }
    return u;
  }
}

// dims: numbers (fixed) or strings (symbolic).
export function tensorType(elemType, dims) {
  const shape = new Msg();
  for (const d of dims) shape.sub(1, typeof d === 'string' ? new Msg().bytes(2, d) : new Msg().varint(1, d));
  return new Msg().sub(1, new Msg().varint(1, elemType).sub(2, shape));
}

export const valueInfo = (name, type) => new Msg().bytes(1, name).sub(2, type);

// nodes: [{op, inputs, outputs, ints: {name: value}, graphs: {name: {nodes, inputs,
// outputs, initializers}}}]; inputs/outputs: valueInfo()s; initializers: [{name, elemType,
// dims, raw: Uint8Array}] or, stored as external data, [{name, elemType, dims, external:
// {location, offset, length}}].
function graph({ nodes, inputs, outputs, initializers = [] }, name) {
  const g = new Msg();
  for (const n of nodes) {
    const m = new Msg();
    for (const i of n.inputs) m.bytes(1, i);
    for (const o of n.outputs) m.bytes(2, o);
    m.bytes(4, n.op);
    for (const [k, v] of Object.entries(n.ints ?? {})) m.sub(5, new Msg().bytes(1, k).varint(3, v).varint(20, 2));
    for (const [k, v] of Object.entries(n.graphs ?? {})) m.sub(5, new Msg().bytes(1, k).sub(6, graph(v, k)).varint(20, 5));
    g.sub(1, m);
  }
  g.bytes(2, name);
  for (const t of initializers) {
    const tp = new Msg();
    for (const d of t.dims) tp.varint(1, d);
    tp.varint(2, t.elemType).bytes(8, t.name);
    if (t.external) {
      for (const [k, v] of Object.entries(t.external)) tp.sub(13, new Msg().bytes(1, k).bytes(2, String(v)));
      tp.varint(14, 1);  // data_location EXTERNAL
    } else {
      tp.bytes(9, t.raw);
    }
    g.sub(5, tp);
  }
  for (const i of inputs) g.sub(11, i);
  for (const o of outputs) g.sub(12, o);
  return g;
}

export function model({ nodes, inputs, outputs, initializers = [], opset = 21, irVersion = 10 }) {
  const g = graph({ nodes, inputs, outputs, initializers }, 'js_test');
  return new Msg().varint(1, irVersion).bytes(2, 'onemodel-js-test').sub(7, g).sub(8, new Msg().bytes(1, '').varint(2, opset)).toBytes();
}

// A one-node model op(x0, ..., x{n-1}) -> y, every value of elemType with shape dims.
export function oneNode(op, elemType, dims, nInputs = 1, opset = 21) {
  const names = Array.from({ length: nInputs }, (_, k) => `x${k}`);
  return model({
    nodes: [{ op, inputs: names, outputs: ['y'] }],
    inputs: names.map((n) => valueInfo(n, tensorType(elemType, dims))),
    outputs: [valueInfo('y', tensorType(elemType, dims))],
    opset,
  });
}

// Loop(M, true, v): v + 1 per iteration (a model run for as long as M says).
export function countingLoop() {
  const one = new Uint8Array(new Float32Array([1]).buffer);
  const t = new Uint8Array([1]);
  return model({
    nodes: [{
      op: 'Loop', inputs: ['M', 'cond', 'v0'], outputs: ['v'],
      graphs: {
        body: {
          nodes: [{ op: 'Add', inputs: ['v_in', 'one'], outputs: ['v_out'] }],
          inputs: [valueInfo('i', tensorType(7, [])), valueInfo('c', tensorType(9, [])), valueInfo('v_in', tensorType(1, [1]))],
          outputs: [valueInfo('c', tensorType(9, [])), valueInfo('v_out', tensorType(1, [1]))],
          initializers: [{ name: 'one', elemType: 1, dims: [1], raw: one }],
        },
      },
    }],
    inputs: [valueInfo('M', tensorType(7, [])), valueInfo('v0', tensorType(1, [1]))],
    outputs: [valueInfo('v', tensorType(1, [1]))],
    initializers: [{ name: 'cond', elemType: 9, dims: [], raw: t }],
    opset: 18,
  });
}
