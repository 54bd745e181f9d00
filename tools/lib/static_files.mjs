// The tools' pages' static files (tools/golden_browser.mjs, tools/bench_browser.mjs):
// answers a request for `<prefix>/<file>` from the folder mapped to its prefix, with the
// type a browser needs for modules and wasm, or 404 when no root holds it.
import fs from 'node:fs';
import path from 'node:path';

// roots: Map of URL prefix ('/js') -> folder. url: the decoded path of the request.
export function serveStatic(res, url, roots) {
  for (const [prefix, dir] of roots) {
    if (!url.startsWith(prefix + '/')) continue;
    const file = path.join(dir, url.slice(prefix.length + 1));
    if (!file.startsWith(dir) || !fs.existsSync(file) || !fs.statSync(file).isFile()) break;
    const type = /\.m?js$/.test(file) ? 'text/javascript' : file.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
    res.writeHead(200, { 'content-type': type, 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
    return;
  }
  res.writeHead(404);
  res.end('not found');
}
