import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { DbDeployment } from '../constructs/db-deployment';
import { ScriptJob } from '../constructs/script-job';
import { stepAccount } from '../constructs/step-account';
import type { Component, PartOf } from '../model/labels';
import { STOP_GRACE_SECONDS } from '../model/db';
import type { Gate, ObjectRef, Wait } from '../plan/types';
import { DATA_USERS, deploymentRefs, jobBase } from './db-steps';
import type { PlanApp } from './plan-app';

/**
 * The clean stop of a server, as upstream's (uyuni-tools mgradm/shared/podman/startstop.go
 * StopServices: the server and its helpers, then the database, each with TimeoutStopSec=180):
 * step `stop-server` scales the server and its helpers to 0 and waits, by Job
 * uyuni-stop-server, until their pods are gone (a terminating pod still uses the database);
 * step `stop-db` then scales the database to 0 and waits, by Job uyuni-stop-db, until its pod is
 * gone (its preStop ran the fast shutdown, src/scripts/db-stop.sh). A Deployment scaled to 0
 * counts no terminating pod, so neither a `scaled-down` wait would do. Each step deletes its Job
 * of an earlier run first, so that a resumed run waits again for what it stops again.
 */
export const STOP_JOBS = { server: 'uyuni-stop-server', db: 'uyuni-stop-db' } as const;

/**
 * The names of a plan's stop objects: the server plans' (part-of uyuni) as above; another set's
 * (the backup's, part-of uyuni-backup) its own, `uyuni-backup-stop…`, so that no object belongs to
 * two ApplySets.
 */
function stopNames(partOf: PartOf): { account: string; server: string; db: string } {
  const prefix = partOf === 'uyuni' ? 'uyuni-' : `${partOf}-`;
  return { account: `${prefix}stop`, server: `${prefix}stop-server`, db: `${prefix}stop-db` };
}

/** The server and its helpers: every user of the data but the database, stopped first. */
export const SERVER_USERS: readonly string[] = DATA_USERS.filter((d) => d !== DbDeployment.NAME);

const SERVER_COMPONENTS: readonly Component[] = ['server', 'hub-xmlrpc', 'coco', 'tftp'];

/** The pods each stop waits for, as a label selector. */
export function stopSelector(which: 'server' | 'db'): string {
  return which === 'db'
    ? 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component=db'
    : `app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (${SERVER_COMPONENTS.join(',')})`;
}

/** How long a Job waits for the pods: the grace and the time to be deleted. */
const STOP_WAIT_SECONDS = STOP_GRACE_SECONDS + 120;

const jobRef = (namespace: string, name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace });

function stopJob(chart: Construct, config: UyuniConfig, which: 'server' | 'db', partOf: PartOf): void {
  const names = stopNames(partOf);
  new ScriptJob(chart, which === 'db' ? 'StopDb' : 'StopServer', {
    ...jobBase(config, 'server'),
    partOf,
    name: names[which],
    serviceAccountName: names.account,
    script: 'wait-stopped.sh',
    env: [
      { name: 'POD_SELECTOR', value: stopSelector(which) },
      { name: 'STOP_WAIT_SECONDS', value: String(STOP_WAIT_SECONDS) },
      { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ],
  });
}

export interface StopStepsOptions {
  /** Why the server stops, for the description ("for a consistent copy"). */
  readonly why: string;
  /** The gates of the stop (evaluated before anything stops). @default none */
  readonly gates?: readonly Gate[];
  /** More waits of step stop-server (the objects `chart` adds). @default none */
  readonly waits?: readonly Wait[];
  /** More objects of step stop-server. */
  readonly chart?: (chart: Construct) => void;
  readonly partOf: PartOf;
}

/** Steps `stop-server` then `stop-db` (see STOP_JOBS). */
export function addStopSteps(plan: PlanApp, config: UyuniConfig, o: StopStepsOptions): void {
  const ns = config.namespace;
  const names = stopNames(o.partOf);
  plan.addStep('stop-server', {
    description: `stop the server ${o.why}: ${SERVER_USERS.join(', ')} to 0 replicas, then wait until their pods are gone (Job ${names.server}); the database still runs`,
    gates: o.gates ? [...o.gates] : [],
    // The Job of an earlier run goes first: each run waits afresh for what it stopped.
    actions: [{ type: 'delete' as const, object: jobRef(ns, names.server) },
      ...deploymentRefs(ns, SERVER_USERS).map((object) => ({ type: 'scale' as const, object, replicas: 0 }))],
    waits: [{ object: jobRef(ns, names.server), for: 'complete' }, ...(o.waits ?? [])],
  }, (chart) => {
    stepAccount(new Construct(chart, 'StopAccount'), ns, names.account, o.partOf, [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
    stopJob(chart, config, 'server', o.partOf);
    o.chart?.(chart);
  });
  plan.addStep('stop-db', {
    description: `then stop the database: ${DbDeployment.NAME} to 0 replicas (its preStop shuts PostgreSQL down fast, within ${STOP_GRACE_SECONDS} s), `
      + `and wait until its pod is gone (Job ${names.db})`,
    actions: [{ type: 'delete' as const, object: jobRef(ns, names.db) },
      ...deploymentRefs(ns, [DbDeployment.NAME]).map((object) => ({ type: 'scale' as const, object, replicas: 0 }))],
    waits: [{ object: jobRef(ns, names.db), for: 'complete' }],
  }, (chart) => {
    stopJob(chart, config, 'db', o.partOf);
  });
}
