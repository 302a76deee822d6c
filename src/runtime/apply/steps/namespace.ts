/**
 * Before a step that applies a Namespace: a namespace being deleted is refused (an apply does not
 * stop its deletion, and nothing new can be created in it), with what to do.
 */
import { namespaceTerminating } from '../../readiness/v1_namespace';
import type { StepRun } from './context';

export async function refuseTerminatingNamespace(s: StepRun): Promise<void> {
  for (const o of s.c.objects.filter((x) => x.apiVersion === 'v1' && x.kind === 'Namespace')) {
    const why = await namespaceTerminating(s.cluster, o.metadata.name);
    if (!why) continue;
    s.emit({ type: 'step-start', ...s.tag, description: s.step.description });
    await s.fail(why);
  }
}
