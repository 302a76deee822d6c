/**
 * What the fake kubelet's pods do, per Job or Deployment name: the same shape as the API
 * simulator's scripts (test/sim/controllers.ts `JobScript`), so a scenario written for one works
 * on the other. A namespace's scenario lives in `<plane dir>/scenarios/<namespace>.json` (so suites
 * sharing one plane keep theirs apart), the rest in `<plane dir>/scenario.json`; the kubelet reads
 * it again for every pod it starts, so a test changes what the next pod does by writing the file
 * (`writeScenario`).
 */
import * as fs from 'fs';
import * as path from 'path';

export interface JobBehaviour {
  /** @default 'succeed' */
  outcome?: 'succeed' | 'fail' | 'hang';
  /** ms from container start to termination. @default 300 */
  durationMs?: number;
  /** Lines the main container prints, spread over durationMs. */
  logs?: string[];
  /** @default 0 for succeed, 1 for fail */
  exitCode?: number;
}

export interface DeploymentBehaviour {
  /** ms from container start until the startup probe passes; 'hold' keeps it starting. @default 0 */
  startupMs?: number | 'hold';
  /** Lines the first container prints at start. */
  logs?: string[];
  /** Lines other containers print at start, by container name (the db pod's archive-status). */
  containerLogs?: Record<string, string[]>;
}

export interface Scenario {
  /** By Job name (the pod's `job-name` label). */
  jobs?: Record<string, JobBehaviour>;
  /** By Deployment name (the pod's ReplicaSet, less its pod-template-hash). */
  deployments?: Record<string, DeploymentBehaviour>;
}

export const scenarioPath = (dir: string, namespace?: string): string =>
  (namespace ? path.join(dir, 'scenarios', `${namespace}.json`) : path.join(dir, 'scenario.json'));

function read(file: string): Scenario | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Scenario;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The namespace's scenario, else the plane's. */
export function readScenario(dir: string, namespace?: string): Scenario {
  return (namespace && read(scenarioPath(dir, namespace))) || read(scenarioPath(dir)) || {};
}

/** Replaces a scenario atomically (the kubelet may be reading it). */
export function writeScenario(dir: string, scenario: Scenario, namespace?: string): void {
  const file = scenarioPath(dir, namespace);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(scenario, null, 2));
  fs.renameSync(tmp, file);
}
