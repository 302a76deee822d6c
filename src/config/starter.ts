/**
 * `uyuni-cdk init`: a starting configuration, commented, as `helm show values` gives one. The
 * starters are the configurations the package ships and synthesizes its own dist/ from
 * (uyuni.yaml and examples/), so they are checked by every synth and never go stale; their
 * comments use the installed command's words. What only the repository needs is left out: the
 * default configuration's `nodeServices` test pods (dist/node-services/, dist/agent/). The
 * modeline names the schema relatively, `uyuni.schema.json` beside the file (init writes it
 * there): it works offline, and keeps working when the package moves or is upgraded.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseDocument } from 'yaml';
import { CONFIG_SCHEMA_FILE } from './json-schema';

/** Each starter and the file of the package it comes from. */
export const STARTERS = {
  install: 'uyuni.yaml',
  migration: 'examples/migration.yaml',
  upgrade: 'examples/upgrade.yaml',
  proxy: 'examples/proxy.yaml',
} as const;

export type StarterName = keyof typeof STARTERS;

/**
 * Sections of a shipped file that are the repository's test fixtures, not a start for anyone:
 * uyuni.yaml's `nodeServices` pod `cleanup-test-ok` (image noop-service) makes the repository's
 * dist/node-services/ and dist/agent/.
 */
const FIXTURES: Partial<Record<StarterName, readonly string[]>> = { install: ['nodeServices'] };

const MODELINE = /^# yaml-language-server: \$schema=.*$/m;
/** The modeline of a starter: the schema beside the file. */
export const STARTER_MODELINE = `# yaml-language-server: $schema=${CONFIG_SCHEMA_FILE}`;

/** The text of a starter, read from the package at `root`: without fixtures, its modeline naming the schema beside it. */
export function starterText(root: string, name: StarterName): string {
  let text = fs.readFileSync(path.join(root, STARTERS[name]), 'utf8');
  const fixtures = FIXTURES[name] ?? [];
  if (fixtures.length) {
    // the Document keeps every other comment and the layout; a removed section takes its comment along
    const doc = parseDocument(text);
    for (const key of fixtures) doc.delete(key);
    text = doc.toString();
  }
  return MODELINE.test(text) ? text.replace(MODELINE, STARTER_MODELINE) : `${STARTER_MODELINE}\n${text}`;
}
