// The library entry (src/index.ts, docs/library.md): the L3 constructs build exactly the objects
// of the plans synth writes, into a chart of the user's own app; props are checked as uyuni.yaml is.
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { parse } from 'yaml';
import { ConfigError, synthesizePlans, UyuniProxy, UyuniServer } from '../../src/index';
import { PLAN_INDEX } from '../../src/plan/reader';
import { ROOT, synthYaml, tempDir, tree } from '../helpers/synth';

const yamlOf = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
/** A plan's objects as `kubectl apply` sees them: keyed by kind/namespace/name. */
const byKey = (objects: any[]) => Object.fromEntries(objects.map((o) => [`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o]));

function chartOf(build: (chart: Chart) => void): any[] {
  const chart = new Chart(Testing.app(), 'app');
  build(chart);
  return Testing.synth(chart);
}

describe('UyuniServer', () => {
  it('puts the objects of the install plan, labels and sync waves included, into the chart it is given', () => {
    const { nodeServices: _n, ...props } = parse(yamlOf('uyuni.yaml'));
    const plan = synthYaml(yamlOf('uyuni.yaml')).install;
    const objects = chartOf((chart) => new UyuniServer(chart, 'uyuni', props));
    expect(Object.keys(byKey(objects))).toEqual(Object.keys(byKey(plan.objects)));
    expect(byKey(objects)).toEqual(byKey(plan.objects));
  });

  it('sits beside the chart\'s own objects and exposes its namespace, FQDN and resolved settings', () => {
    let server!: UyuniServer;
    const objects = chartOf((chart) => {
      new (require('cdk8s').ApiObject)(chart, 'mine', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'apps' } });
      server = new UyuniServer(chart, 'uyuni', { fqdn: 'uyuni.example.org', namespace: 'uyuni-test', tftp: { enabled: true } });
    });
    expect(objects[0].metadata.name).toBe('mine');
    expect(server.namespace).toBe('uyuni-test');
    expect(server.fqdn).toBe('uyuni.example.org');
    expect(server.config.images.tag).toBe(parse(yamlOf('uyuni.yaml')).images.tag);
    expect(server.node.children.map((c) => c.node.id)).toEqual(['namespace', 'volumes', 'tls', 'services', 'database', 'ingress', 'server']);
    expect(objects.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name)).toEqual(['db', 'uyuni', 'tftp']);
    expect(objects.filter((o) => o.kind !== 'Namespace' && o.metadata.name !== 'mine').every((o) => o.metadata.namespace === 'uyuni-test')).toBe(true);
  });

  it('refuses a bad prop naming the construct\'s path and the prop, and leaves the props object as it was', () => {
    const props = { fqdn: 'uyuni.example.com', images: { pullPolicy: 'Sometimes' } } as any;
    const before = structuredClone(props);
    let error: unknown;
    chartOf((chart) => {
      try {
        new UyuniServer(chart, 'uyuni', props);
      } catch (e) {
        error = e;
      }
    });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe('UyuniServer app/uyuni: invalid configuration\n  - images.pullPolicy: must be one of "Always", "IfNotPresent", "Never"');
    expect(props).toEqual(before);
    const good = { fqdn: 'uyuni.example.com' };
    chartOf((chart) => new UyuniServer(chart, 'uyuni', good));
    expect(good).toEqual({ fqdn: 'uyuni.example.com' });
  });

  it('refuses the flow sections and the proxy, saying where they go', () => {
    const attempt = (props: any) => () => chartOf((chart) => new UyuniServer(chart, 'uyuni', props));
    expect(attempt({ fqdn: 'uyuni.example.com', migration: { source: 'old.example.com' } }))
      .toThrow('UyuniServer app/uyuni: invalid configuration\n  - migration: not a prop here (a migration is a plan that uyuni-cdk run runs step by step: write it with synthesizePlans)');
    expect(attempt({ fqdn: 'uyuni.example.com', proxy: { fqdn: 'proxy.example.com' } })).toThrow('proxy: not a prop here (the proxy is UyuniProxy)');
  });
});

describe('UyuniProxy', () => {
  it('puts the objects of the proxy plan into the chart it is given', () => {
    const { plans: _p, ...props } = parse(yamlOf('examples/proxy.yaml'));
    const plan = synthYaml(yamlOf('examples/proxy.yaml')).proxy;
    let proxy!: UyuniProxy;
    const objects = chartOf((chart) => { proxy = new UyuniProxy(chart, 'proxy', props); });
    expect(byKey(objects)).toEqual(byKey(plan.objects));
    expect([proxy.namespace, proxy.fqdn]).toEqual(['uyuni-proxy', 'proxy.example.com']);
  });

  it('and a server in the same chart, in their own namespaces', () => {
    const objects = chartOf((chart) => {
      new UyuniServer(chart, 'uyuni', { fqdn: 'uyuni.example.com' });
      new UyuniProxy(chart, 'proxy', { fqdn: 'uyuni.example.com', proxy: { fqdn: 'proxy.example.com', tls: { issuer: true } } });
    });
    const certs = objects.filter((o) => o.kind === 'Certificate').map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    expect(certs).toContain('uyuni/uyuni-proxy-proxy-cert');
    expect(new Set(objects.filter((o) => o.kind === 'Service').map((o) => o.metadata.namespace))).toEqual(new Set(['uyuni', 'uyuni-proxy']));
  });

  it('refuses props without a proxy section', () => {
    expect(() => chartOf((chart) => new UyuniProxy(chart, 'proxy', { fqdn: 'uyuni.example.com' } as any)))
      .toThrow('UyuniProxy app/proxy: invalid configuration\n  - plans[0]: proxy needs a proxy section');
  });
});

describe('synthesizePlans', () => {
  it('writes the flows as plan directories, as synth does, keeping the other plans there', () => {
    const out = tempDir();
    fs.mkdirSync(path.join(out, 'proxy'));
    fs.writeFileSync(path.join(out, 'proxy', PLAN_INDEX), '{}\n');
    const settings = parse(yamlOf('examples/migration.yaml'));
    expect(synthesizePlans(settings, out)).toEqual(['migrate', 'migrate-prepare']);
    const expected = synthYaml(yamlOf('examples/migration.yaml'));
    expect(tree(path.join(out, 'migrate'))).toEqual(tree(expected.migrate.dir));
    expect(fs.readdirSync(out).sort()).toEqual(['migrate', 'migrate-prepare', 'proxy']);
  });

  it('throws ConfigError on bad settings and leaves the directory as it was', () => {
    const out = tempDir();
    fs.mkdirSync(path.join(out, 'install'));
    fs.writeFileSync(path.join(out, 'install', PLAN_INDEX), '{}\n');
    const before = tree(out);
    expect(() => synthesizePlans({ fqdn: 'not a domain' }, out)).toThrow(ConfigError);
    expect(tree(out)).toEqual(before);
    expect(fs.readdirSync(path.dirname(out)).filter((n) => n.startsWith('.uyuni-cdk-synth-') && n.includes(`-${process.pid}-`))).toEqual([]);
  });
});
