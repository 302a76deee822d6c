/**
 * What every verb's view is made of, as Terraform's `internal/command/views.View`: where the result
 * goes, the format `-o` chose (once, by the verb's entry point), and for text the colours and
 * `-v`. Each verb has a small interface of what it shows (plan-view.ts, status-view.ts,
 * destroy-view.ts; `run`'s is the Reporter, a stream of events), implemented twice: text for
 * people, and one result document for machines (JSON, or YAML with `-o yaml`).
 */
import { stringify } from 'yaml';
import type { Palette } from './colour';

/** `-o, --output`. */
export type ViewFormat = 'text' | 'json' | 'yaml';

export interface ViewOptions {
  /** `-o`: text for people; json or yaml, one document for machines. @default text */
  readonly format?: ViewFormat;
  /** Where the result goes (standard output). */
  readonly out: (text: string) => void;
  /** Text: colours (colour.ts). @default none */
  readonly palette?: Palette;
  /** Text: `-v`, everything listed, not counted. */
  readonly verbose?: boolean;
}

/** The machine view (json, yaml) rather than the text one. */
export const forMachines = (o: ViewOptions): boolean => o.format === 'json' || o.format === 'yaml';

/** A verb's one result document for machines: a JSON line, or YAML with `-o yaml`. */
export function machineText(o: ViewOptions, doc: object): string {
  return o.format === 'yaml' ? stringify(doc) : `${JSON.stringify(doc)}\n`;
}
