// Opt-in registration (node): `import 'onemodel/register'` before a library that looks
// for an onnxruntime at globalThis[Symbol.for('onnxruntime')] (transformers.js does, at
// its import) makes that library run on OneModel. js/register.browser.mjs is the same
// for browsers and bundlers.
import * as ort from './index.node.mjs';
import { registerGlobal } from './global.mjs';

registerGlobal(ort);
export default ort;
