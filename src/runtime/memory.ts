/**
 * Loaded by the CLI before the runtime (src/cli/options.ts). Loading @kubernetes/client-node is a burst of
 * allocation (~105 MB RSS) after which V8 would grow its young generation (up to 16 MB per
 * semi-space) and size the old one generously, memory never given back. The runtime allocates
 * little afterwards and waits on the network, so a heap tuned for size costs nothing measurable
 * and keeps the peak RSS near 100 MB instead of 130-165 MB (bench/runtime.bench.ts). Both flags
 * are read whenever the heap grows, so setting them here, before the client loads, works.
 */
import { setFlagsFromString } from 'v8';

setFlagsFromString('--semi-space-growth-factor=1');
setFlagsFromString('--optimize-for-size');
