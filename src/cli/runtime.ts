/**
 * The runtime's verbs, loaded only when one runs (so `--help` never loads the Kubernetes client).
 * Apart from src/cli/options.ts, which `status`'s own bundle shares (src/cli/status-main.ts): an
 * `import()` there would put every verb's runtime into that bundle too.
 */
export async function loadRuntime(): Promise<typeof import('../runtime/verbs/commands')> {
  return import('../runtime/verbs/commands');
}
