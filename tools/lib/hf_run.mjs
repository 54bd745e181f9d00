// transformers.js pipelines on tools/make_hf_models.py's folders (tiny-bert, tiny-qwen2),
// and the comparison of two engines' results: shared by the node runner
// (tools/lib/hf_pipeline.mjs, for tests/js/transformers_test.mjs) and the page of
// tests/js/transformers_browser.mjs. No node or browser API here.

// The inputs: sentences of different lengths (the batch is padded), with words in and out
// of the WordPiece vocabulary; two prompts of different lengths (the pipeline pads them on
// the left).
export const SENTENCES = ['The quick cat walked to the river.', 'A small engine can answer every question the same way, morning and night!'];
export const PROMPTS = ['Once upon a time', 'The engine ran the model on every computer in the'];
export const MAX_NEW_TOKENS = 20;
export const DTYPES = ['fp32', 'q8', 'q4'];
// The largest |OneModel - onnxruntime-node| allowed in an embedding (the hidden states
// are O(1): LayerNormalization's output, |x| < 4 here; the pooled ones are unit vectors).
// Measured: at most 2e-6 for fp32, q8 and q4 (the engines order float sums differently).
export const TOLERANCE = 1e-4;

const plain = (t) => ({ dims: [...t.dims], type: t.type, data: Array.from(t.data, (x) => (typeof x === 'bigint' ? Number(x) : x)) });
// Which engine holds a model's sessions: OneModel's handlers have onemodelEngine (as
// tests/js/llm_test.mjs checks); anything else is 'other'.
const engines = (model) => Object.values(model.sessions).map((s) => ('onemodelEngine' in (s.handler ?? {}) ? 'onemodel' : 'other'));

async function step(fn) {
  const t0 = performance.now();
  try {
    return { ...(await fn()), ms: Math.round(performance.now() - t0) };
  } catch (e) {
    return { error: String(e?.stack ?? e), ms: Math.round(performance.now() - t0) };
  }
}

// transformers: the module ({pipeline, env}), its env already pointed at the models.
// device: undefined (transformers.js's default) or a device name. Per dtype:
// features: feature-extraction on tiny-bert, mean-pooled and normalized, and the raw
// last_hidden_state; generation: text-generation on tiny-qwen2, greedy, MAX_NEW_TOKENS:
// the pipeline's texts and, for the same inputs (the pipeline's tokenizer settings: left
// padding, no special tokens added), model.generate's token ids. A step that throws is
// {error}; the others still run.
export async function runPipelines({ pipeline, env }, { dtypes = DTYPES, device } = {}) {
  const out = { device: device ?? 'default', versions: { ...env.backends.onnx?.versions }, transformers: env.version, results: {} };
  for (const dtype of dtypes) {
    const r = (out.results[dtype] = {});
    r.features = await step(async () => {
      const extractor = await pipeline('feature-extraction', 'tiny-bert', { dtype, device });
      const pooled = await extractor(SENTENCES, { pooling: 'mean', normalize: true });
      const hidden = await extractor(SENTENCES);
      const res = { sessions: engines(extractor.model), pooled: plain(pooled), hidden: plain(hidden) };
      await extractor.dispose();
      return res;
    });
    r.generation = await step(async () => {
      const generator = await pipeline('text-generation', 'tiny-qwen2', { dtype, device });
      const texts = (await generator(PROMPTS, { max_new_tokens: MAX_NEW_TOKENS, do_sample: false })).map((x) => x[0].generated_text);
      generator.tokenizer.padding_side = 'left';
      const inputs = generator.tokenizer(PROMPTS, { add_special_tokens: false, padding: true, truncation: true });
      const ids = await generator.model.generate({ ...inputs, max_new_tokens: MAX_NEW_TOKENS, do_sample: false });
      const res = { sessions: engines(generator.model), texts, promptIds: plain(inputs.input_ids), ids: plain(ids) };
      await generator.dispose();
      return res;
    });
  }
  return out;
}

const firstDifference = (a, b) => {
  for (let i = 0; i < Math.max(a.length, b.length); ++i) if (a[i] !== b[i]) return i;
  return -1;
};
const short = (e) => e.split('\n').slice(0, 3).join(' | ');

// Compares one dtype's step ('features' or 'generation') of OneModel's results (ours)
// with onnxruntime-node's (ref). Returns {ok, detail, stats}: detail says what differs (or
// what was compared), stats {maxAbs, bitwise, values} for features.
export function compareStep(kind, ref, ours) {
  if (ref.error) return { ok: false, detail: `the onnxruntime-node reference failed: ${short(ref.error)}` };
  if (ours.error) return { ok: false, detail: `OneModel failed: ${short(ours.error)}` };
  if (!ours.sessions.length || ours.sessions.some((s) => s !== 'onemodel')) {
    return { ok: false, detail: `not every session ran on OneModel: ${ours.sessions.join(', ')}` };
  }
  if (ref.sessions.some((s) => s !== 'other')) return { ok: false, detail: 'the reference run got a OneModel session' };
  if (kind === 'features') {
    let maxAbs = 0, bitwise = 0, values = 0;
    for (const key of ['pooled', 'hidden']) {
      const a = ref[key], b = ours[key];
      if (JSON.stringify(a.dims) !== JSON.stringify(b.dims)) {
        return { ok: false, detail: `${key}: dims [${b.dims}], onnxruntime-node's [${a.dims}]` };
      }
      for (let i = 0; i < a.data.length; ++i) {
        const d = Math.abs(a.data[i] - b.data[i]);
        if (Number.isNaN(d)) maxAbs = NaN;
        else if (d > maxAbs) maxAbs = d;
        if (Object.is(a.data[i], b.data[i])) ++bitwise;
      }
      values += a.data.length;
    }
    const stats = { maxAbs, bitwise, values };
    const line = `max |OneModel - onnxruntime-node| ${maxAbs.toExponential(2)} (tolerance ${TOLERANCE}), ` +
      `${bitwise} of ${values} values bitwise equal${bitwise === values ? ' (all)' : ''}`;
    return { ok: maxAbs <= TOLERANCE, detail: line, stats };
  }
  const at = firstDifference(ours.ids.data, ref.ids.data);
  if (JSON.stringify(ours.ids.dims) !== JSON.stringify(ref.ids.dims) || at !== -1) {
    const w = ref.ids.dims[1], p = ref.promptIds.dims[1];
    const where = at < 0 ? '' : ` first in prompt ${Math.floor(at / w)} at ${at % w < p ? `prompt position ${at % w}` : `new token ${at % w - p}`} ` +
      `(OneModel ${ours.ids.data[at]}, onnxruntime-node ${ref.ids.data[at]})`;
    return { ok: false, detail: `token ids differ${where}: ` +
      `dims [${ours.ids.dims}] vs [${ref.ids.dims}]\n  OneModel:         ${ours.ids.data.join(' ')}\n  onnxruntime-node: ${ref.ids.data.join(' ')}` };
  }
  const t = firstDifference(ours.texts, ref.texts);
  if (t !== -1) return { ok: false, detail: `text ${t} differs:\n  OneModel:         ${JSON.stringify(ours.texts[t])}\n  onnxruntime-node: ${JSON.stringify(ref.texts[t])}` };
  const gen = ref.ids.dims[1] - ref.promptIds.dims[1];
  const distinct = new Set(ref.ids.data.filter((_, i) => i % ref.ids.dims[1] >= ref.promptIds.dims[1])).size;
  return { ok: true, detail: `${ref.ids.dims[0]} prompts x ${gen} new tokens equal (${distinct} distinct), texts equal` };
}
