/** Arguments and environment values that break naive quoting: each must reach the process verbatim. */
export const HOSTILE_ARGS = [
  'plain', 'with space', '  leading and trailing  ', "single'quote", 'double"quote', 'back\\slash', 'trailing\\',
  '100%', '%n %i %% %%%', '$HOME', '${PATH}', '$$', '$', 'new\nline', 'two\n\nblank lines', 'tab\there', 'cr\rhere',
  ';', '\\;', '', '-', '"', "'", '"unbalanced', 'ünïcödé ✓', 'a=b', '--flag=x y', '*', '~', '`id`', '$(id)',
  '#not a comment', '\\x41\\n', 'line\\', '\x01\x7f', '@', '-minus', '+plus', '!bang', ':colon',
];

export const HOSTILE_ENV: Record<string, string> = {
  A_SPACE: 'a b', QUOTES: `say "hi" and 'bye'`, BACKSLASH: 'C:\\dir\\', PERCENT: '100% %n %%', DOLLAR: '$HOME and ${PATH} $$',
  NEWLINES: 'one\ntwo\n', EMPTY: '', TAB: 'a\tb', SEMI: ';', UNICODE: 'ü✓', EQUALS: 'a=b=c', HASH: '# x', SPECIFIER: '%h',
  INJECT: 'x"\nExecStartPre=/bin/false\nEnvironment="Y=1',
};

/** A script (run by this Node.js) that writes its argv and environment as JSON to `out`. */
export function dumperScript(out: string): string {
  return `#!${process.execPath}\n` +
    `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ argv: process.argv.slice(1), env: process.env }));\n`;
}
