/**
 * The unit model and the pod → unit renderer: pure functions, no I/O, no D-Bus, so the synth side
 * (constructs) and the node agent share them without loading anything heavy.
 */
export * from './defaults';
export * from './escape';
export * from './unit-name';
export * from './unit';
export * from './pod';
export * from './render';
export * from './paths';
export * from './agent-unit';
