// The backup and restore plans as synth writes them: what each Job mounts (derived from the one
// claim table), what its service account may do, the gates and their facts, and the
// configuration's errors.
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { ConfigError, parseConfig, plansOf } from '../src/config/load';
import { readScript } from '../src/constructs/script-job';
import { INSTALL_VOLUMES } from '../src/model/volumes';
import { evaluateGate } from '../src/runtime/decide/gates';
import { envOf, podSpec, ROOT, synthYaml } from './helpers/synth';
import { validateObject } from './helpers/validate';

const exampleText = fs.readFileSync(path.join(ROOT, 'examples', 'backup.yaml'), 'utf8');
const example = parse(exampleText);
const withConfig = (change: Record<string, unknown>) => JSON.stringify({ ...example, ...change });
const mountsOf = (o: any) => Object.fromEntries(podSpec(o).containers[0].volumeMounts.map((m: any) => [m.mountPath, m]));
const claimOfVolume = (o: any) => Object.fromEntries(podSpec(o).volumes.map((v: any) => [v.name, v.persistentVolumeClaim?.claimName]));

describe('a backup section', () => {
  const plans = synthYaml(exampleText);

  it('writes dist/backup and dist/restore, valid objects only', () => {
    expect(plansOf(parseConfig(exampleText))).toEqual(['backup', 'restore']);
    expect(plansOf(parseConfig(withConfig({ plans: undefined })))).toEqual(['install', 'backup', 'restore']);
    // Traefik's kinds have no schema model; the rest is validated.
    for (const p of [plans.backup, plans.restore]) for (const o of p.objects.filter((x) => !x.apiVersion.startsWith('traefik.io/'))) validateObject(o);
    expect(plans.backup.plan.steps.map((s) => s.name)).toEqual(['prepare', 'backup-volume', 'inspect', 'inspect-db', 'record', 'stop-server', 'stop-db', 'backup', 'start-server', 'prune']);
  });

  it('the copy mounts every claim of the install read-only, from the claim table, and the backup claim', () => {
    const job = plans.backup.find('Job', 'uyuni-backup');
    const mounts = mountsOf(job);
    for (const v of INSTALL_VOLUMES) expect(mounts[`/claims/${v.name}`]).toMatchObject({ name: v.name, readOnly: true });
    expect(mounts['/backup']).toEqual({ name: 'backup', mountPath: '/backup' });
    expect(claimOfVolume(job).backup).toBe('uyuni-backup');
    expect(envOf(job).CLAIMS.split(' ')).toEqual(INSTALL_VOLUMES.map((v) => v.name));
    expect(envOf(job).RELEASE_DIR).toBe('etc-rhn/uyuni-cdk');
    expect(podSpec(job).serviceAccountName).toBe('uyuni-backup');
    expect(podSpec(job).containers[0].command[2]).toBe(readScript('backup.sh'));
  });

  it('its service account reads exactly the saved Secrets and lists pods, nothing else', () => {
    expect(plans.backup.find('Role', 'uyuni-backup').rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['admin-credentials', 'db-credentials', 'reportdb-credentials', 'db-admin-credentials', 'uyuni-ca', 'uyuni-cert', 'db-cert'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    expect(envOf(plans.backup.find('Job', 'uyuni-backup')).SECRETS).toBe('admin-credentials db-credentials reportdb-credentials db-admin-credentials uyuni-ca uyuni-cert db-cert');
    // The record Job (while the server runs): the pods and the runtime's records, read only.
    expect(plans.backup.find('Role', 'uyuni-backup-record').rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['uyuni-cdk-history'] },
    ]);
    const record = plans.backup.find('Job', 'uyuni-backup-record');
    expect(podSpec(record).serviceAccountName).toBe('uyuni-backup-record');
    expect(JSON.parse(envOf(record).CONFIGURATION).fqdn).toBe('uyuni.example.com');
    expect(mountsOf(record)['/backup']).toEqual({ name: 'backup', mountPath: '/backup' });
    for (const name of ['uyuni-backup-inspect', 'uyuni-backup-inspect-db', 'uyuni-backup-prune']) {
      expect(podSpec(plans.backup.find('Job', name)).automountServiceAccountToken).toBe(false);
    }
  });

  it('stops the server and its helpers, waits until their pods are gone, then the database, before the copy; starts what the configuration runs after it, whatever the result', () => {
    const stop = plans.backup.step('stop-server');
    expect(stop.actions.map((a) => `${a.type} ${a.object.name}${a.type === 'scale' ? ` ${a.replicas}` : ''}`))
      .toEqual(['delete uyuni-backup-stop-server', 'scale uyuni 0', 'scale uyuni-coco-attestation 0', 'scale uyuni-hub-xmlrpc 0', 'scale tftp 0']);
    expect(stop.waits[0]).toEqual({ object: expect.objectContaining({ kind: 'Job', name: 'uyuni-backup-stop-server' }), for: 'complete' });
    expect(envOf(plans.backup.find('Job', 'uyuni-backup-stop-server')).POD_SELECTOR).toBe('app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (server,hub-xmlrpc,coco,tftp)');
    const stopDb = plans.backup.step('stop-db');
    expect(stopDb.actions.map((a) => `${a.type} ${a.object.name}${a.type === 'scale' ? ` ${a.replicas}` : ''}`)).toEqual(['delete uyuni-backup-stop-db', 'scale db 0']);
    expect(stopDb.waits).toEqual([{ object: expect.objectContaining({ kind: 'Job', name: 'uyuni-backup-stop-db' }), for: 'complete' }]);
    // Its own names: no object belongs to both the backup's ApplySet and the server's.
    expect(podSpec(plans.backup.find('Job', 'uyuni-backup-stop-db')).serviceAccountName).toBe('uyuni-backup-stop');
    expect(plans.restore.find('Job', 'uyuni-stop-db')).toBeDefined();
    expect(envOf(plans.backup.find('Job', 'uyuni-backup-stop-db')).POD_SELECTOR).toBe('app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component=db');
    const start = plans.backup.step('start-server');
    expect(start.gates).toEqual([]);
    expect(start.actions.map((a) => `${a.object.name}${a.type === 'scale' ? ` ${a.replicas}` : ''}`)).toEqual(['db 1', 'uyuni 1']);
    const more = synthYaml(withConfig({ hubApi: { replicas: 2 }, tftp: { enabled: true } })).backup.step('start-server');
    expect(more.actions.map((a) => `${a.object.name}${a.type === 'scale' ? ` ${a.replicas}` : ''}`)).toEqual(['db 1', 'uyuni 1', 'tftp 1', 'uyuni-hub-xmlrpc 2']);
    expect(more.waits.filter((w) => w.for === 'rollout').map((w) => w.object.name)).toEqual(['db', 'uyuni', 'tftp', 'uyuni-hub-xmlrpc']);
    // Each run is a new backup: the first step deletes the Jobs of the last run.
    expect(plans.backup.step('prepare').actions.map((a) => `${a.type} ${a.object.kind}/${a.object.name}`))
      .toEqual(['delete Job/uyuni-backup-inspect', 'delete Job/uyuni-backup-inspect-db', 'delete Job/uyuni-backup-record', 'delete Job/uyuni-backup', 'delete Job/uyuni-backup-prune']);
  });

  it('prunes only after a copy that succeeded', () => {
    const [gate] = plans.backup.step('prune').gates;
    expect(evaluateGate(gate, { backup_ok: 'true' }).ok).toBe(true);
    expect(evaluateGate(gate, { backup_ok: 'false', backup_error: 'full' }).ok).toBe(false);
    expect(evaluateGate(gate, {}).ok).toBe(false);
    expect(envOf(plans.backup.find('Job', 'uyuni-backup-prune')).KEEP).toBe('7');
  });

  it('the backup claim is made with backup.size, kept out of the server\'s objects, and left alone without it', () => {
    const claim = plans.backup.find('PersistentVolumeClaim', 'uyuni-backup');
    expect(claim.spec).toMatchObject({ storageClassName: 'standard', resources: { requests: { storage: '500Gi' } } });
    expect(claim.metadata.labels?.['app.kubernetes.io/part-of']).toBe('uyuni-backup');
    expect(plans.backup.plan.selector['app.kubernetes.io/part-of']).toBe('uyuni-backup');
    const existing = synthYaml(withConfig({ backup: { claim: 'nfs-backups' } }));
    expect(existing.backup.plan.steps.map((s) => s.name)).not.toContain('backup-volume');
    expect(claimOfVolume(existing.backup.find('Job', 'uyuni-backup')).backup).toBe('nfs-backups');
    expect(existing.restore.objects.some((o) => o.metadata.name === 'nfs-backups')).toBe(false);
  });

  it('restore: gates before the stop, the emptiness gate unless forced, the Job writes every claim', () => {
    const r = plans.restore;
    expect(r.plan.steps.map((s) => s.name)).toEqual(['namespace', 'prepare', 'volumes', 'restore-check', 'restore-inspect-db', 'stop-server',
      'stop-db', 'restore-target', 'restore', 'tls', 'services', 'database', 'ingress', 'server']);
    const sound = {
      backup_verified: 'true', backup_fqdn: 'uyuni.example.com', backup_product: 'uyuni', product: 'uyuni', backup_release: '2026.08',
      uyuni_release: '2026.08', backup_pg_version: '18', image_pg_version: '18', backup_tls_mode: 'generated', record_ok: 'true',
      'restore_image.server': 'registry.opensuse.org/uyuni/server@sha256:ab', 'restore_image.db': 'registry.opensuse.org/uyuni/server-postgresql@sha256:cd',
    };
    const refused = (facts: Record<string, string>) => r.step('stop-server').gates.filter((g) => !evaluateGate(g, facts).ok).map((g) => g.message);
    expect(refused(sound)).toEqual([]);
    expect(refused({ ...sound, backup_release: '2026.10' })).toEqual([expect.stringContaining('newer release than the server image')]);
    expect(refused({ ...sound, backup_fqdn: 'other.example.com' })).toEqual([expect.stringContaining('another server name')]);
    expect(refused({ ...sound, image_pg_version: '19' })).toEqual([expect.stringContaining('another PostgreSQL major')]);
    expect(refused({ ...sound, backup_tls_mode: 'third-party' })).toEqual([expect.stringContaining('another TLS mode')]);
    expect(refused({ ...sound, record_ok: 'false' })).toEqual([expect.stringContaining('the backup\'s record of what it was taken with refuses this restore')]);
    expect(refused({ ...sound, 'restore_image.db': '' })).toEqual([expect.stringContaining('the image db runs after the restore is decided (fact restore_image.db')]);
    // Every step after the restore Job runs the images restore-check decided, in place of the configured ones.
    const after = r.plan.steps.slice(r.plan.steps.findIndex((x) => x.name === 'restore') + 1);
    expect(after.map((x) => x.name)).toEqual(['tls', 'services', 'database', 'ingress', 'server']);
    for (const x of after) {
      expect(x.imagesFromFacts).toEqual([
        { image: 'registry.opensuse.org/uyuni/server:2026.08', fact: 'restore_image.server' },
        { image: 'registry.opensuse.org/uyuni/server-postgresql:2026.08', fact: 'restore_image.db' },
      ]);
    }
    expect(r.plan.steps.filter((x) => x.imagesFromFacts).length).toBe(after.length);
    // The check compares with what this configuration runs, and the flags it allows, all off by default.
    const check = envOf(r.find('Job', 'uyuni-restore-check'));
    expect(JSON.parse(check.CURRENT_IMAGES).server).toEqual({ image: expect.stringMatching(/\/server:/), key: 'server' });
    expect(JSON.parse(check.CONFIGURATION).fqdn).toBe('uyuni.example.com');
    expect([check.ALLOW_NEWER_IMAGES, check.ALLOW_CONFIG_CHANGES, check.ALLOW_MISSING_RECORD, check.IGNORED]).toEqual(['false', 'false', 'false', 'backup restore namespace caRotation']);
    const [empty] = r.step('restore').gates;
    expect(evaluateGate(empty, { target_empty: 'false' }).ok).toBe(false);
    expect(evaluateGate(empty, { target_empty: 'true' }).ok).toBe(true);
    const forced = synthYaml(withConfig({ restore: { force: true } })).restore;
    expect(forced.step('restore').gates).toEqual([]);
    expect(envOf(forced.find('Job', 'uyuni-restore')).FORCE).toBe('true');
    const job = r.find('Job', 'uyuni-restore');
    const mounts = mountsOf(job);
    for (const v of INSTALL_VOLUMES) expect(mounts[`/claims/${v.name}`].readOnly).toBeUndefined();
    expect(mounts['/backup'].readOnly).toBe(true);
    for (const v of INSTALL_VOLUMES) expect(mountsOf(r.find('Job', 'uyuni-restore-target'))[`/claims/${v.name}`].readOnly).toBe(true);
    expect(r.find('Role', 'uyuni-restore').rules.map((x: any) => x.verbs.join(','))).toEqual(['get,update', 'create', 'list']);
  });

  it('restore: the allow flags reach the check and the plan\'s description; a digest pinned in the configuration is the image', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const r = synthYaml(withConfig({
      restore: { allowNewerImages: true, allowConfigChanges: true, allowMissingRecord: true },
      images: { components: { server: { digest } } },
    })).restore;
    expect(r.plan.description).toContain('(allowNewerImages: images other than the recorded ones; allowConfigChanges: a configuration other than the recorded one; allowMissingRecord: a backup without its record)');
    const check = envOf(r.find('Job', 'uyuni-restore-check'));
    expect([check.ALLOW_NEWER_IMAGES, check.ALLOW_CONFIG_CHANGES, check.ALLOW_MISSING_RECORD]).toEqual(['true', 'true', 'true']);
    const server = `registry.opensuse.org/uyuni/server@${digest}`;
    expect(JSON.parse(check.CURRENT_IMAGES).server.image).toBe(server);
    expect(podSpec(r.find('Deployment', 'uyuni')).containers[0].image).toBe(server);
    expect(r.step('server').imagesFromFacts).toContainEqual({ image: server, fact: 'restore_image.server' });
  });
});

describe('backup configuration errors', () => {
  const problems = (change: Record<string, unknown>) => {
    try {
      parseConfig(withConfig(change));
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    return [];
  };
  it.each([
    [{ backup: { keep: 0 } }, 'backup.keep: must be a whole number from 1 to 1000'],
    [{ backup: { size: 'lots' } }, 'backup.size: must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti'],
    [{ backup: { claim: 'Bad_Name' } }, 'backup.claim: must be a DNS-1123 subdomain: lower-case letters, digits, "-" and "."'],
    [{ restore: { from: 'yesterday' } }, 'restore.from: must be latest or a backup id such as 20261201T203000Z'],
    [{ images: { components: { server: { digest: 'sha256:abc' } } } }, 'images.components.server.digest: must be sha256: and 64 lower-case hex digits'],
    [{ backup: undefined, plans: undefined }, 'restore: needs a backup section (backup.claim is where the backups are)'],
    [{ backup: undefined, restore: undefined, plans: ['backup'] }, 'plans[0]: backup needs a backup section'],
  ])('%j', (change, message) => {
    expect(problems(change)).toEqual([message]);
  });
});
