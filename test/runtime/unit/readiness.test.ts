import type { V1ContainerStatus, V1Deployment, V1DeploymentStatus, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { newestReplicaSet, rolloutPods, rolloutVerdict, scaledDownVerdict } from '../../../src/runtime/readiness/apps_v1_deployment';
import { jobVerdict } from '../../../src/runtime/readiness/batch_v1_job';
import { readyVerdict } from '../../../src/runtime/readiness/cert_manager_ready';
import { blockerKind, comingUp, describePod, podBlocker, podProgress, stuckTooLong, terminations } from '../../../src/runtime/readiness/v1_pod';
import { boundVerdict, storageClassOf } from '../../../src/runtime/readiness/v1_persistentvolumeclaim';
import { selectorMatches, selectorString } from '../../../src/runtime/readiness/selector';
import { verdictFor } from '../../../src/runtime/readiness';

const cond = (type: string, status = 'True', reason?: string, message?: string) => ({ type, status, reason, message });

interface PodState {
  phase?: string;
  started?: boolean;
  ready?: boolean;
  restarts?: number;
  waiting?: { reason: string; message?: string };
  lastExit?: { exitCode: number; reason: string };
  deleting?: boolean;
  rs?: string;
  name?: string;
}

/** A pod of the Uyuni server (startup probe up to 10 h, readiness probe) in the state under test. */
function serverPod(s: PodState = {}): V1Pod {
  const phase = s.phase ?? 'Running';
  const cs: V1ContainerStatus = {
    name: 'uyuni', image: 'registry.opensuse.org/uyuni/server:latest', imageID: '',
    started: s.started ?? false, ready: s.ready ?? false, restartCount: s.restarts ?? 0,
    state: s.waiting ? { waiting: s.waiting } : phase === 'Running' ? { running: {} } : { waiting: { reason: 'ContainerCreating' } },
    ...(s.lastExit ? { lastState: { terminated: s.lastExit } } : {}),
  };
  return {
    metadata: { name: s.name ?? 'uyuni-7d9f8c5b4-x2k4p', namespace: 'uyuni', labels: { app: 'uyuni' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'uyuni-7d9f8c5b4', uid: s.rs ?? 'rs-2', controller: true }], ...(s.deleting ? { deletionTimestamp: new Date() } : {}) },
    spec: {
      containers: [{
        name: 'uyuni', image: 'registry.opensuse.org/uyuni/server:latest',
        startupProbe: { exec: { command: ['/usr/bin/startup-check.sh'] }, periodSeconds: 10, failureThreshold: 3600 },
        readinessProbe: { httpGet: { path: '/rhn/manager/api/api/getVersion', port: 80 }, initialDelaySeconds: 120 },
      }],
    },
    status: {
      phase,
      containerStatuses: [cs],
      conditions: [cond('PodScheduled'), cond('Ready', s.ready ? 'True' : 'False')],
    },
  };
}
const job = (...conditions: any[]) => ({ kind: 'Job', metadata: { name: 'j' }, status: { conditions } });

describe('Job readiness', () => {
  it('is done on Complete=True', () => {
    expect(jobVerdict(job(cond('Complete'))).state).toBe('done');
  });

  it('waits while only SuccessCriteriaMet is set (1.31+: pods still terminating)', () => {
    const v = jobVerdict(job(cond('SuccessCriteriaMet')));
    expect(v.state).toBe('waiting');
    expect(v.reason).toContain('SuccessCriteriaMet');
  });

  it('is done on SuccessCriteriaMet followed by Complete, whatever the order of the list', () => {
    expect(jobVerdict(job(cond('SuccessCriteriaMet'), cond('Complete'))).state).toBe('done');
    expect(jobVerdict(job(cond('Complete'), cond('SuccessCriteriaMet'))).state).toBe('done');
  });

  it('waits while only FailureTarget is set, and fails on Failed with its reason', () => {
    expect(jobVerdict(job(cond('FailureTarget', 'True', 'BackoffLimitExceeded'))).state).toBe('waiting');
    const v = jobVerdict(job(cond('FailureTarget', 'True', 'BackoffLimitExceeded'), cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')));
    expect(v.state).toBe('failed');
    expect(v.reason).toContain('BackoffLimitExceeded');
  });

  it('does not read conditions[0] blindly: a False condition first does not decide', () => {
    expect(jobVerdict(job(cond('Failed', 'False'), cond('Complete'))).state).toBe('done');
    expect(jobVerdict(job(cond('Complete', 'False'))).state).toBe('waiting');
  });

  it('waits for a Job without conditions and one that does not exist', () => {
    expect(jobVerdict({ status: { active: 1 } }).reason).toContain('active 1');
    expect(jobVerdict(undefined).state).toBe('waiting');
  });
});

describe('Deployment readiness', () => {
  const dep = (generation: number, status: V1DeploymentStatus, replicas = 2): V1Deployment => ({
    metadata: { generation, uid: 'dep-1', annotations: { 'deployment.kubernetes.io/revision': '2' } },
    spec: { replicas, selector: { matchLabels: { app: 'uyuni' } }, template: {} },
    status,
  });
  const full = { observedGeneration: 3, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

  it('does not trust a status older than the spec (observedGeneration < generation)', () => {
    const v = rolloutVerdict(dep(4, full));
    expect(v.state).toBe('waiting');
    expect(v.reason).toContain('observedGeneration 3 < generation 4');
  });

  it('is done when updated = ready = available = desired', () => {
    expect(rolloutVerdict(dep(3, full)).state).toBe('done');
  });

  it('waits while old replicas remain or some are not available, saying how many are ready', () => {
    expect(rolloutVerdict(dep(3, { ...full, replicas: 3 })).reason).toBe('2/2 ready (1 old terminating)');
    expect(rolloutVerdict(dep(3, { ...full, availableReplicas: 1 })).reason).toBe('2/2 ready (2 updated, 1 available)');
    expect(rolloutVerdict(dep(3, { observedGeneration: 3, replicas: 1, updatedReplicas: 1 }, 1)).reason).toBe('0/1 ready');
    expect(rolloutVerdict(dep(3, { observedGeneration: 3, replicas: 1 }, 1)).reason).toBe('0/1 ready (0 updated, 0 available)');
  });

  it('fails on Progressing=False ProgressDeadlineExceeded when its pods are not known (as kubectl rollout status)', () => {
    const v = rolloutVerdict(dep(3, { ...full, readyReplicas: 0, conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded')] }));
    expect(v.state).toBe('failed');
    expect(v.reason).toContain('ProgressDeadlineExceeded');
  });

  it('counts a Deployment scaled to 0 as scaled down only once no replicas are reported', () => {
    expect(scaledDownVerdict({ metadata: { generation: 2 }, spec: { replicas: 0, selector: {}, template: {} }, status: { observedGeneration: 2, replicas: 1 } }).state).toBe('waiting');
    expect(scaledDownVerdict({ metadata: { generation: 2 }, spec: { replicas: 0, selector: {}, template: {} }, status: { observedGeneration: 2 } }).state).toBe('done');
    expect(scaledDownVerdict(undefined).state).toBe('done');
  });

  describe('a long first start (startup probe) is not a failed rollout', () => {
    // The Deployment controller gives up after progressDeadlineSeconds (600 by default) without a
    // ready pod; the server's first start takes hours.
    const pastDeadline = dep(1, {
      observedGeneration: 1, replicas: 1, updatedReplicas: 1, unavailableReplicas: 1,
      conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "uyuni-7d9f8c5b4" has timed out progressing.')],
    }, 1);

    it('waits while its pod is Running and the container has not passed its startup probe, past the progress deadline', () => {
      const v = rolloutVerdict(pastDeadline, [serverPod({ started: false })]);
      expect(v).toEqual({ state: 'waiting', reason: '0/1 ready; past its progress deadline, but its pods are still coming up' });
    });

    it('waits while the started container waits for its readiness probe, past the progress deadline', () => {
      expect(rolloutVerdict(pastDeadline, [serverPod({ started: true })]).state).toBe('waiting');
    });

    it('waits for a pod that got ready before the Deployment status says so', () => {
      expect(rolloutVerdict(pastDeadline, [serverPod({ started: true, ready: true })]).state).toBe('waiting');
    });

    it('fails once its pod crash-loops (also after a failed startup probe restarted it), naming the pod\'s state', () => {
      const crashing = serverPod({ restarts: 3, waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container=uyuni' }, lastExit: { exitCode: 137, reason: 'Error' } });
      const v = rolloutVerdict(pastDeadline, [crashing]);
      expect(v.state).toBe('failed');
      expect(v.reason).toBe('ProgressDeadlineExceeded: ReplicaSet "uyuni-7d9f8c5b4" has timed out progressing.; pod uyuni-7d9f8c5b4-x2k4p: Running, uyuni CrashLoopBackOff, 3 restarts (last exit 137 Error)');
    });

    it('fails when its pod cannot pull its image, is Pending, is going away, or pods are missing', () => {
      expect(rolloutVerdict(pastDeadline, [serverPod({ phase: 'Pending', waiting: { reason: 'ImagePullBackOff' } })]).state).toBe('failed');
      expect(rolloutVerdict(pastDeadline, [serverPod({ phase: 'Pending' })]).state).toBe('failed');
      expect(rolloutVerdict(pastDeadline, [serverPod({ deleting: true })]).state).toBe('failed');
      expect(rolloutVerdict(pastDeadline, []).state).toBe('failed');
      expect(rolloutVerdict({ ...pastDeadline, spec: { ...pastDeadline.spec!, replicas: 2 } }, [serverPod()]).state).toBe('failed');
    });

    it('is done, as before, once the Deployment reports the rollout complete', () => {
      const complete = dep(1, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [cond('Progressing', 'True', 'NewReplicaSetAvailable')] }, 1);
      expect(rolloutVerdict(complete, [serverPod({ started: true, ready: true })]).state).toBe('done');
    });
  });

  describe('the pods a rollout waits on', () => {
    const rs = (uid: string, revision: string, owner = 'dep-1'): V1ReplicaSet => ({
      metadata: { name: `uyuni-${uid}`, uid, annotations: { 'deployment.kubernetes.io/revision': revision }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'uyuni', uid: owner, controller: true }] },
    });
    const d = dep(3, full, 1);

    it('are those of the newest ReplicaSet: the one at the Deployment\'s revision, else the highest it controls', () => {
      expect(newestReplicaSet(d, [rs('rs-1', '1'), rs('rs-2', '2'), rs('rs-9', '9', 'someone-else')])?.metadata?.uid).toBe('rs-2');
      expect(newestReplicaSet({ ...d, metadata: { ...d.metadata, annotations: {} } }, [rs('rs-1', '1'), rs('rs-3', '3')])?.metadata?.uid).toBe('rs-3');
      const pods = [serverPod({ rs: 'rs-1', name: 'old', deleting: true }), serverPod({ rs: 'rs-2', name: 'new' })];
      expect(rolloutPods(d, [rs('rs-1', '1'), rs('rs-2', '2')], pods).map((p) => p.metadata?.name)).toEqual(['new']);
    });

    it('are its live pods by selector while no ReplicaSet of it is known', () => {
      const other: V1Pod = { ...serverPod({ name: 'db' }), metadata: { ...serverPod().metadata, name: 'db', labels: { app: 'db' } } };
      const pods = [serverPod({ name: 'new' }), serverPod({ name: 'old', deleting: true }), other];
      expect(rolloutPods(d, [], pods).map((p) => p.metadata?.name)).toEqual(['new']);
    });

    it('reads selectors as the API server does, and writes them as a labelSelector', () => {
      const sel = { matchLabels: { app: 'uyuni' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['server', 'proxy'] }, { key: 'canary', operator: 'DoesNotExist' }] };
      expect(selectorMatches(sel, { app: 'uyuni', tier: 'server' })).toBe(true);
      expect(selectorMatches(sel, { app: 'uyuni', tier: 'server', canary: 'x' })).toBe(false);
      expect(selectorMatches(sel, { app: 'uyuni' })).toBe(false);
      expect(selectorString(sel)).toBe('app=uyuni,tier in (server,proxy),!canary');
    });
  });
});

describe('Certificate / Issuer readiness', () => {
  it('is done on Ready=True and names the reason otherwise', () => {
    expect(readyVerdict({ status: { conditions: [cond('Ready')] } }).state).toBe('done');
    const v = readyVerdict({ status: { conditions: [cond('Ready', 'False', 'Pending', 'Issuing certificate')] } });
    expect(v.state).toBe('waiting');
    expect(v.reason).toContain('Pending');
  });

  it('waits while Ready=True is of an older generation than the spec (an issuerRef just changed)', () => {
    const ready = (observedGeneration: number) => ({ type: 'Ready', status: 'True', observedGeneration });
    const v = readyVerdict({ metadata: { generation: 3 }, status: { conditions: [ready(2)] } });
    expect(v).toEqual({ state: 'waiting', reason: 'Ready of generation 2, the spec is at 3' });
    expect(readyVerdict({ metadata: { generation: 3 }, status: { conditions: [ready(3)] } }).state).toBe('done');
    // no observedGeneration (an Issuer of an older cert-manager): Ready=True is enough
    expect(readyVerdict({ metadata: { generation: 3 }, status: { conditions: [cond('Ready')] } }).state).toBe('done');
  });
});

describe('PVC readiness', () => {
  const classes = [
    { metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, volumeBindingMode: 'WaitForFirstConsumer' },
    { metadata: { name: 'fast' }, volumeBindingMode: 'Immediate' },
  ];
  const claim = (phase: string, storageClassName?: string) => ({ spec: { storageClassName }, status: { phase } });

  it('is done when Bound', () => {
    expect(boundVerdict(claim('Bound'), undefined).state).toBe('done');
  });

  it('never blocks on a Pending claim whose class waits for the first consumer (default class too)', () => {
    const c = claim('Pending');
    expect(storageClassOf(c, classes)?.metadata.name).toBe('standard');
    expect(boundVerdict(c, storageClassOf(c, classes)).state).toBe('done');
  });

  it('waits on a Pending claim of an Immediate class', () => {
    const c = claim('Pending', 'fast');
    expect(boundVerdict(c, storageClassOf(c, classes)).state).toBe('waiting');
  });
});

describe('stuck pods', () => {
  const pod = (waiting?: { reason: string; message?: string }, sched?: ReturnType<typeof cond>): V1Pod => ({
    status: {
      phase: 'Pending',
      containerStatuses: waiting ? [{ name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting } }] : [],
      conditions: sched ? [sched] : [],
    },
  });

  it('names ImagePullBackOff, ErrImagePull and CreateContainerConfigError', () => {
    for (const reason of ['ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError']) {
      expect(podBlocker(pod({ reason, message: 'x' }))).toContain(reason);
    }
  });

  it('names Unschedulable from PodScheduled=False', () => {
    expect(podBlocker(pod(undefined, cond('PodScheduled', 'False', 'Unschedulable', '0/3 nodes are available')))).toContain('Unschedulable');
  });

  it('does not call ContainerCreating stuck', () => {
    expect(podBlocker(pod({ reason: 'ContainerCreating' }))).toBeUndefined();
  });

  it('never calls a Running pod stuck while its container has not passed its startup probe, however long that takes', () => {
    const starting = serverPod({ started: false });
    expect(podBlocker(starting)).toBeUndefined();
    expect(stuckTooLong(podBlocker(starting), 0, 10 * 3600_000, 120_000)).toBeUndefined();
    expect(comingUp(starting)).toBe(true);
  });

  it('still calls a crash loop stuck, also when a failed startup probe made the kubelet restart the container', () => {
    const restarted = serverPod({ restarts: 2, waiting: { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container=uyuni' }, lastExit: { exitCode: 137, reason: 'Error' } });
    expect(podBlocker(restarted)).toBe('CrashLoopBackOff: back-off 20s restarting failed container=uyuni (container uyuni)');
    expect(comingUp(restarted)).toBe(false);
  });

  it('keeps one stuck window while a pull alternates ErrImagePull and ImagePullBackOff', () => {
    expect(blockerKind('ErrImagePull: not found (container main)')).toBe(blockerKind('ImagePullBackOff: Back-off pulling image (container main)'));
    expect(blockerKind('CrashLoopBackOff: back-off 10s (container main)')).not.toBe(blockerKind('ImagePullBackOff (container main)'));
    expect(blockerKind('Unschedulable: 0/1 nodes are available')).toBe('Unschedulable');
  });

  it('fails only once the blocker outlasted the grace window', () => {
    expect(stuckTooLong('ImagePullBackOff', 1000, 5000, 10_000)).toBeUndefined();
    expect(stuckTooLong('ImagePullBackOff', 1000, 11_000, 10_000)).toContain('ImagePullBackOff');
    expect(stuckTooLong(undefined, 1000, 99_000, 10_000)).toBeUndefined();
  });

  it('reports exit codes and reasons of terminated containers', () => {
    const p: V1Pod = { status: { containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 3, reason: 'Error' } } }] } };
    expect(terminations(p)).toEqual([{ container: 'main', exitCode: 3, reason: 'Error', message: undefined }]);
  });
});

describe('what the progress line says about a pod', () => {
  it('tells the phase, and per container whether it started (startup probe) and is ready, its restarts and waiting reason', () => {
    const line = (s: PodState) => describePod(podProgress(serverPod(s)));
    expect(line({ phase: 'Pending' })).toBe('pod uyuni-7d9f8c5b4-x2k4p: Pending, uyuni ContainerCreating, 0 restarts');
    expect(line({ started: false })).toBe('pod uyuni-7d9f8c5b4-x2k4p: Running, uyuni starting (startup probe), 0 restarts');
    expect(line({ started: true })).toBe('pod uyuni-7d9f8c5b4-x2k4p: Running, uyuni started, not ready (readiness probe), 0 restarts');
    expect(line({ started: true, ready: true })).toBe('pod uyuni-7d9f8c5b4-x2k4p: Running, uyuni ready, 0 restarts');
    expect(line({ restarts: 1, waiting: { reason: 'CrashLoopBackOff' }, lastExit: { exitCode: 1, reason: 'Error' } }))
      .toBe('pod uyuni-7d9f8c5b4-x2k4p: Running, uyuni CrashLoopBackOff, 1 restart (last exit 1 Error)');
    expect(line({ deleting: true })).toBe('pod uyuni-7d9f8c5b4-x2k4p: Terminating, uyuni starting (startup probe), 0 restarts');
  });

  it('gives the same as data for the JSON events', () => {
    expect(podProgress(serverPod({ started: false }))).toEqual({
      pod: 'uyuni-7d9f8c5b4-x2k4p', phase: 'Running',
      containers: [{ name: 'uyuni', state: 'running', started: false, ready: false, restartCount: 0, startupProbe: true, readinessProbe: true }],
    });
  });
});

describe('the rule table', () => {
  it('answers every wait condition of the plan format', () => {
    expect(verdictFor('exists', { object: {} }).state).toBe('done');
    expect(verdictFor('exists', { object: undefined }).state).toBe('waiting');
    expect(verdictFor('deleted', { object: undefined }).state).toBe('done');
    expect(verdictFor('deleted', { object: { metadata: { deletionTimestamp: new Date() } } }).reason).toBe('terminating');
  });
});
