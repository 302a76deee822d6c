/**
 * Text echoed on a terminal from what a user or a file gave (a kubeconfig's context name, a
 * `--set` value, an API's message): its control characters shown as escapes (an ESC sequence in
 * a malformed kubeconfig would otherwise recolour, retitle or clear the terminal), and a run of
 * characters without a space longer than `maxRun` cut (a 100 kB value is not printed whole).
 * Newlines and tabs stay. Nothing here imports anything.
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

export function printable(text: string, maxRun = 200): string {
  const escaped = text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return escaped.replace(new RegExp(`\\S{${maxRun + 1},}`, 'g'), (run) => `${run.slice(0, maxRun)}…(${run.length - maxRun} more characters)`);
}
