/**
 * Imported first by the verbs' entry point. V8 grows its young generation up to 16 MB per
 * semi-space when much survives a scavenge, which the burst of loading @kubernetes/client-node
 * does; that memory is never given back. The runtime allocates little afterwards, so keeping the
 * young generation at its initial size costs nothing measurable and saves ~25 MB of RSS
 * (bench/runtime.bench.ts). This flag is read whenever the heap grows, so setting it here works.
 */
import { setFlagsFromString } from 'v8';

setFlagsFromString('--semi-space-growth-factor=1');
