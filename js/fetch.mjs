// Fetches a model by URL, reporting progress as onProgress(loaded, total) (total 0 when
// the server does not say). Shared by the browser and node entries.
import { OneModelError } from './api.mjs';

export async function fetchWithProgress(url, onProgress) {
  let resp;
  try {
    resp = await fetch(url);
  } catch (e) {
    throw new OneModelError('io', `cannot fetch '${url}': ${e.message}`);
  }
  if (!resp.ok) throw new OneModelError('io', `cannot fetch '${url}': HTTP ${resp.status}`);
  const total = Number(resp.headers.get('content-length')) || 0;
  if (!onProgress || !resp.body) return new Uint8Array(await resp.arrayBuffer());
  const reader = resp.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    onProgress(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const p of parts) { bytes.set(p, at); at += p.byteLength; }
  return bytes;
}
