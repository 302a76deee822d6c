/** Facts: the `key=value` lines a facts-producing Job printed; later gates read them. */
import type { V1Job } from '@kubernetes/client-node';
import type { Cluster } from './client';
import { podsOfJob } from './jobs';

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

/** The facts a Job's succeeded pods printed, every container's log. */
export async function readFacts(cluster: Cluster, job: V1Job): Promise<Facts> {
  const pods = (await podsOfJob(cluster, job)).filter((p) => p.status?.phase === 'Succeeded');
  const facts: Facts = {};
  for (const p of pods) {
    for (const c of p.spec?.containers ?? []) Object.assign(facts, parseFacts(await cluster.readLog(p.metadata?.namespace ?? '', p.metadata?.name ?? '', c.name)));
  }
  return facts;
}
