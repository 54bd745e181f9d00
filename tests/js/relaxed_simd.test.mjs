// The SIMD128 + relaxed SIMD flavour: which flavour the loader takes (node 20 validates
// relaxed SIMD only with --experimental-wasm-relaxed-simd, so each case runs in a child
// node with or without it), that ONEMODEL_WASM_RELAXED=0, --relaxed-simd off and
// env.wasm.relaxedSimd = false keep the SIMD128 one, that threads keep the threaded one,
// that the flavour's fused multiply-add is probed, and that its fast sessions plan the
// fused rows while exact ones give the committed hashes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const FLAG = '--experimental-wasm-relaxed-simd';
const built = existsSync('build/wasm/onemodel-simd-relaxed.wasm') || existsSync('dist/onemodel-simd-relaxed.wasm');
const cli = (nodeArgs, args, env = {}) => spawnSync(process.execPath, [...nodeArgs, 'js/bin/onemodel.mjs', ...args],
  { encoding: 'utf8', env: { ...process.env, ONEMODEL_VERBOSE: '1', ...env }, timeout: 120000 });
const flavourOf = (r) => (r.stderr.match(/\[onemodel\] wasm flavour: (\S+)/) || [])[1];

test('relaxed SIMD: the probe follows the engine', { skip: !built && 'no simd-relaxed build' }, () => {
  const probe = (args) => spawnSync(process.execPath, [...args, '--input-type=module', '-e',
    "import { relaxedSimdSupported } from './js/simd.mjs'; console.log(relaxedSimdSupported())"], { encoding: 'utf8' });
  assert.equal(probe([FLAG]).stdout.trim(), 'true');
  const plain = probe([]).stdout.trim();
  // node 20 without the flag: false; node 22 and later validate relaxed SIMD by default.
  assert.equal(plain, String(Number(process.versions.node.split('.')[0]) >= 22));
});

test('relaxed SIMD: which flavour the CLI loads', { skip: !built && 'no simd-relaxed build' }, () => {
  let r = cli([FLAG], ['targets']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(flavourOf(r), 'simd-relaxed');
  assert.match(r.stdout, /^cpu: wasm32 simd128 relaxed-simd$/m);
  // This machine's engines run relaxed_madd as one fused operation (x64 with FMA3, arm64).
  assert.match(r.stdout, /^fused multiply-add for fast mode's twins: yes$/m);
  for (const [args, env] of [[['--relaxed-simd', 'off', 'targets'], {}], [['targets'], { ONEMODEL_WASM_RELAXED: '0' }]]) {
    r = cli([FLAG], args, env);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(flavourOf(r), 'simd', `${args} ${JSON.stringify(env)}`);
    assert.match(r.stdout, /^cpu: wasm32 simd128$/m);
    assert.match(r.stdout, /^fused multiply-add for fast mode's twins: no/m);
  }
  r = cli([FLAG], ['--threads', '2', 'targets']);
  assert.equal(flavourOf(r), 'simd-threads');
  r = cli([FLAG], ['--simd', 'off', 'targets']);
  assert.equal(flavourOf(r), 'scalar');
  r = cli([FLAG], ['--relaxed-simd', 'sometimes', 'targets']);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /relaxed SIMD takes off or detect/);
});

test('relaxed SIMD: exact mode gives the committed hashes, fast mode plans the fused rows', { skip: !built && 'no simd-relaxed build' }, () => {
  const G = 'testdata/graphs';
  const want = Object.fromEntries(readFileSync(`${G}/golden-exact.txt`, 'utf8').trim().split('\n').map((l) => l.split(' ')));
  const r = cli([FLAG], ['golden', '--models', G]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(flavourOf(r), 'simd-relaxed');
  let compared = 0;
  for (const line of r.stdout.trim().split('\n')) {
    const [key, hash] = line.split(' ');
    if (!(key in want)) continue;
    assert.equal(hash, want[key], key);
    ++compared;
  }
  assert.ok(compared >= 20, `only ${compared} lines compared`);
  const plan = cli([FLAG], ['--mode', 'fast', 'info', `${G}/transformer_block.onnx`, '--plan']);
  assert.equal(plan.status, 0, plan.stderr);
  assert.match(plan.stdout, /gemm-fma fast/);
  const exact = cli([FLAG], ['info', `${G}/transformer_block.onnx`, '--plan']);
  assert.doesNotMatch(exact.stdout, /fma/);
});

test('relaxed SIMD: env.wasm.relaxedSimd through the package', { skip: !built && 'no simd-relaxed build' }, () => {
  const flavour = (setting) => {
    const r = spawnSync(process.execPath, [FLAG, '--input-type=module', '-e', `import * as ort from './js/index.node.mjs';
      ort.env.onemodel.engine = 'wasm'; ort.env.wasm.numThreads = 1; ${setting}
      const s = await ort.InferenceSession.create('testdata/graphs/conv_net.onnx');
      console.log(s.handler.module.onemodelFlavour);`], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  };
  assert.equal(flavour(''), 'simd-relaxed');
  assert.equal(flavour('ort.env.wasm.relaxedSimd = false;'), 'simd');
});

// Fast mode's rows give their references' bits wherever they run, so the relaxed flavour's
// fast sessions give the native FMA target's bits (avx2: FMA without VNNI, so no integer
// row either side) on every committed graph, and not exact mode's everywhere.
const NATIVE = 'build/native/onemodel';
const hasAvx2 = existsSync(NATIVE) && spawnSync(NATIVE, ['targets'], { encoding: 'utf8' }).stdout.includes(' avx2');
test('relaxed SIMD: fast mode gives the native FMA target\'s bits', { skip: !(built && hasAvx2) && 'needs the simd-relaxed build and a native avx2 build on an AVX2 CPU' }, () => {
  const G = 'testdata/graphs';
  const native = spawnSync(NATIVE, ['--mode', 'fast', '--isa', 'avx2', '--threads', '1', 'golden', '--models', G], { encoding: 'utf8' });
  assert.equal(native.status, 0, native.stderr);
  const wasm = cli([FLAG], ['--mode', 'fast', 'golden', '--models', G]);
  assert.equal(wasm.status, 0, wasm.stderr);
  assert.equal(flavourOf(wasm), 'simd-relaxed');
  assert.equal(wasm.stdout, native.stdout);
  const exact = spawnSync(NATIVE, ['golden', '--models', G], { encoding: 'utf8' });
  assert.notEqual(wasm.stdout, exact.stdout, 'fast mode changed no output: the twins did not run');
});
