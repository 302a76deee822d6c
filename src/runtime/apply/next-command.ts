/**
 * After a failed run: the command that continues it, as the user would type it (the same plan
 * directory, namespace and connection), with `--rerun <step>` when the failed step has Jobs and
 * they ran (a failed Job is only run again on request; a step without Jobs resumes by itself, and
 * so does one that failed before its Jobs were applied: a gate, a requirement, an action).
 */
import type { Plan } from '../../plan/types';

/** How the user reached the cluster: repeated in the next command. */
export interface Connection {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** A word as a POSIX shell reads it back: quoted only when it has to be. */
export function shellWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** The command that follows a step's pods' logs (`uyuni-cdk logs <plan dir> <step> -f`), reaching the cluster as the run did. */
export function followLogsCommand(planDir: string, plan: Plan, connection: Connection, step: string): string {
  const words = ['uyuni-cdk', 'logs', planDir, step, '-f'];
  if (plan.namespace) words.push('-n', plan.namespace);
  if (connection.kubeconfig) words.push('--kubeconfig', connection.kubeconfig);
  if (connection.context) words.push('--context', connection.context);
  return words.map(shellWord).join(' ');
}

export function nextCommand(planDir: string, plan: Plan, connection: Connection, failedStep?: string, jobsRan = true): string {
  const step = plan.steps.find((s) => s.name === failedStep);
  const words = ['uyuni-cdk', 'run', planDir, '-n', plan.namespace];
  if (connection.kubeconfig) words.push('--kubeconfig', connection.kubeconfig);
  if (connection.context) words.push('--context', connection.context);
  if (jobsRan && step?.objects.some((o) => o.kind === 'Job')) words.push('--rerun', step.name);
  return words.map(shellWord).join(' ');
}
