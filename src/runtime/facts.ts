/** Facts: the `key=value` lines a facts-producing Job printed; later gates read them. */
export type Facts = Record<string, string>;

/** Reads `key=value` lines; other lines (progress chatter) are ignored; the last value of a key wins. */
export function parseFacts(text: string): Facts {
  const facts: Facts = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_.\-]*)=(.*)$/.exec(line);
    if (m) facts[m[1]] = m[2].trim();
  }
  return facts;
}
