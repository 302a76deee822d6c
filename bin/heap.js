'use strict';
// The command's heap, tuned for size: loading @kubernetes/client-node is a burst of allocation
// (~105 MB RSS) after which V8 would grow its young generation (up to 16 MB per semi-space) and
// size the old one generously, memory never given back. The runtime and the agent allocate
// little afterwards and wait on the network or systemd, so a heap tuned for size costs nothing
// measurable and keeps the peak RSS near 100 MB instead of 130-165 MB (bench/). V8 reads both
// flags whenever the heap grows. bin/uyuni-cdk.js sets them first thing, before the bundle is
// read and compiled (its code cache is valid only under the flags it was made with, and the
// compile's own allocations are then held to them too); src/runtime/memory.ts again for other
// ways into the runtime (the agent's single executable).
const { setFlagsFromString } = require('v8');

function tuneHeap() {
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--optimize-for-size');
}

module.exports = { tuneHeap };
