/**
 * `uyuni-cdk init`: a starting configuration, commented, as `helm show values` gives one. The
 * starters are the configurations the package ships and synthesizes its own dist/ from
 * (uyuni.yaml and examples/), so they are checked by every synth and never go stale; the
 * modeline is pointed at the installed package's JSON Schema, so an editor completes and checks.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CONFIG_SCHEMA_FILE } from './json-schema';

/** Each starter and the file of the package it comes from. */
export const STARTERS = {
  install: 'uyuni.yaml',
  migration: 'examples/migration.yaml',
  upgrade: 'examples/upgrade.yaml',
  proxy: 'examples/proxy.yaml',
} as const;

export type StarterName = keyof typeof STARTERS;

const MODELINE = /^# yaml-language-server: \$schema=.*$/m;

/** The text of a starter, read from the package at `root`, its modeline naming the package's schema. */
export function starterText(root: string, name: StarterName): string {
  const text = fs.readFileSync(path.join(root, STARTERS[name]), 'utf8');
  const modeline = `# yaml-language-server: $schema=${path.join(root, CONFIG_SCHEMA_FILE)}`;
  return MODELINE.test(text) ? text.replace(MODELINE, modeline) : `${modeline}\n${text}`;
}
