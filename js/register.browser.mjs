// Opt-in registration (browsers, bundlers): as js/register.node.mjs, with the browser
// entry.
import * as ort from './index.browser.mjs';
import { registerGlobal } from './global.mjs';

registerGlobal(ort);
export default ort;
