import { rolloutVerdict, scaledDownVerdict } from '../../../src/runtime/readiness/apps_v1_deployment';
import { jobVerdict } from '../../../src/runtime/readiness/batch_v1_job';
import { readyVerdict } from '../../../src/runtime/readiness/cert_manager_ready';
import { podBlocker, stuckTooLong, terminations } from '../../../src/runtime/readiness/v1_pod';
import { boundVerdict, storageClassOf } from '../../../src/runtime/readiness/v1_persistentvolumeclaim';
import { verdictFor } from '../../../src/runtime/readiness';

const cond = (type: string, status = 'True', reason?: string, message?: string) => ({ type, status, reason, message });
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
  const dep = (generation: number, status: any, replicas = 2) => ({ metadata: { generation }, spec: { replicas }, status });
  const full = { observedGeneration: 3, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

  it('does not trust a status older than the spec (observedGeneration < generation)', () => {
    const v = rolloutVerdict(dep(4, full));
    expect(v.state).toBe('waiting');
    expect(v.reason).toContain('observedGeneration 3 < generation 4');
  });

  it('is done when updated = ready = available = desired', () => {
    expect(rolloutVerdict(dep(3, full)).state).toBe('done');
  });

  it('waits while old replicas remain or some are not available', () => {
    expect(rolloutVerdict(dep(3, { ...full, replicas: 3 })).state).toBe('waiting');
    expect(rolloutVerdict(dep(3, { ...full, availableReplicas: 1 })).state).toBe('waiting');
  });

  it('fails on Progressing=False ProgressDeadlineExceeded', () => {
    const v = rolloutVerdict(dep(3, { ...full, readyReplicas: 0, conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded')] }));
    expect(v.state).toBe('failed');
    expect(v.reason).toContain('ProgressDeadlineExceeded');
  });

  it('counts a Deployment scaled to 0 as scaled down only once no replicas are reported', () => {
    expect(scaledDownVerdict({ metadata: { generation: 2 }, spec: { replicas: 0 }, status: { observedGeneration: 2, replicas: 1 } }).state).toBe('waiting');
    expect(scaledDownVerdict({ metadata: { generation: 2 }, spec: { replicas: 0 }, status: { observedGeneration: 2 } }).state).toBe('done');
    expect(scaledDownVerdict(undefined).state).toBe('done');
  });
});

describe('Certificate / Issuer readiness', () => {
  it('is done on Ready=True and names the reason otherwise', () => {
    expect(readyVerdict({ status: { conditions: [cond('Ready')] } }).state).toBe('done');
    const v = readyVerdict({ status: { conditions: [cond('Ready', 'False', 'Pending', 'Issuing certificate')] } });
    expect(v.state).toBe('waiting');
    expect(v.reason).toContain('Pending');
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
  const pod = (waiting?: { reason: string; message?: string }, sched?: any) => ({
    status: { phase: 'Pending', containerStatuses: waiting ? [{ name: 'main', state: { waiting } }] : [], conditions: sched ? [sched] : [] },
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

  it('fails only once the blocker outlasted the grace window', () => {
    expect(stuckTooLong('ImagePullBackOff', 1000, 5000, 10_000)).toBeUndefined();
    expect(stuckTooLong('ImagePullBackOff', 1000, 11_000, 10_000)).toContain('ImagePullBackOff');
    expect(stuckTooLong(undefined, 1000, 99_000, 10_000)).toBeUndefined();
  });

  it('reports exit codes and reasons of terminated containers', () => {
    const p = { status: { containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 3, reason: 'Error' } } }] } };
    expect(terminations(p)).toEqual([{ container: 'main', exitCode: 3, reason: 'Error', message: undefined }]);
  });
});

describe('the rule table', () => {
  it('answers every wait condition of the plan format', () => {
    expect(verdictFor('exists', { object: {} }).state).toBe('done');
    expect(verdictFor('exists', { object: undefined }).state).toBe('waiting');
    expect(verdictFor('deleted', { object: undefined }).state).toBe('done');
    expect(verdictFor('deleted', { object: { metadata: { deletionTimestamp: 'x' } } }).reason).toBe('terminating');
  });
});
