import type { V1Job } from '@kubernetes/client-node';
import { rule } from './rule';
import { condition, done, failed, Verdict, waiting } from './verdict';

/**
 * Job: done on Complete=True, failed on Failed=True. Since Kubernetes 1.31 SuccessCriteriaMet /
 * FailureTarget come first and Complete / Failed only once the pods terminated
 * (kubernetes/kubernetes#125510): those interim conditions mean "still finishing", so the exit
 * codes and logs we report are final. Pods stuck before they start never fail a Job
 * (kubernetes#66756): see `pod.ts` and the grace window of the waiter.
 */
export function jobVerdict(job: V1Job | undefined): Verdict {
  if (!job) return waiting('Job not found');
  const failedC = condition(job, 'Failed');
  if (failedC?.status === 'True') return failed(`Job failed: ${failedC.reason ?? 'Failed'}${failedC.message ? `: ${failedC.message}` : ''}`);
  const complete = condition(job, 'Complete');
  if (complete?.status === 'True') return done('Complete');
  if (condition(job, 'FailureTarget')?.status === 'True') return waiting('FailureTarget: pods terminating');
  if (condition(job, 'SuccessCriteriaMet')?.status === 'True') return waiting('SuccessCriteriaMet: pods terminating');
  const s = job.status ?? {};
  const parts = [`active ${s.active ?? 0}`, `succeeded ${s.succeeded ?? 0}`, `failed ${s.failed ?? 0}`];
  return waiting(`Job running (${parts.join(', ')})`);
}

/** `Complete` also under the interim condition: for `status`, where "finishing" is worth showing. */
export function jobPhase(job: V1Job | undefined): 'complete' | 'failed' | 'running' {
  const v = jobVerdict(job);
  return v.state === 'done' ? 'complete' : v.state === 'failed' ? 'failed' : 'running';
}

export const completeRule = rule('complete', (job: V1Job | undefined) => jobVerdict(job));
