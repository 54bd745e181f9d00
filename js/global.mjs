// globalThis[Symbol.for('onnxruntime')]: where transformers.js (and libraries written
// like it) look for an onnxruntime before importing their own. An onnxruntime already
// there is kept, with a console note (the import order decides, not this module).
export function registerGlobal(ort) {
  const key = Symbol.for('onnxruntime');
  const held = globalThis[key];
  if (held === undefined) globalThis[key] = ort;
  else if (held !== ort && held?.env?.versions?.onemodel === undefined) {
    console.warn('onemodel/register: globalThis[Symbol.for(\'onnxruntime\')] already holds another onnxruntime; it is kept');
  }
}
