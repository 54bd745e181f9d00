// The threaded wasm build of the suite: the shared workers its sessions use (15: pools of
// up to 16 threads), as js/loader.mjs sets Module.onemodelWorkers for the package.
Module['onemodelWorkers'] = 15;
