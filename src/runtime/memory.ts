/**
 * Loaded by the CLI before the runtime (src/cli/options.ts) and by the agent's verbs: the heap
 * tuned for size (bin/heap.js says why), for the ways into the runtime that do not start at
 * bin/uyuni-cdk.js, which tunes it first thing. Setting the same flags again changes nothing.
 */
const { tuneHeap } = require('../../bin/heap') as { tuneHeap(): void };

tuneHeap();

export {};
