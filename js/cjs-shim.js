// Injected into the CommonJS bundle (tools/pack.sh): import.meta.url as the bundle's file URL.
export const __onemodel_import_meta_url = require('url').pathToFileURL(__filename).href;
