import { Testing } from 'cdk8s';
import { ServicesPerPort, ServicesPerPortProps } from '../../src/constructs/services-per-port';
import { PROXY_SERVICES, serverServices, ServiceSpec } from '../../src/model/ports';
import { K8sObject, validateObject } from '../helpers/validate';

const WEB: ServiceSpec = { name: 'web', component: 'server', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] };
const ALL_FEATURES = serverServices({ tftpService: true, debugJava: true, monitoring: true, hubApi: true });

const synth = (props: Partial<ServicesPerPortProps> = {}): K8sObject[] => {
  const chart = Testing.chart();
  new ServicesPerPort(chart, 'Services', { namespace: 'uyuni', services: [WEB], ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  return objects;
};
const named = (objects: K8sObject[], name: string) => {
  const found = objects.find((o) => o.metadata.name === name);
  if (!found) throw new Error(`no Service ${name} in ${objects.map((o) => o.metadata.name).join(', ')}`);
  return found;
};
/** The server's Services, exposed as given. */
const server = (exposure: ServicesPerPortProps['exposure']) => synth({ services: ALL_FEATURES, exposure });
const nodePorts = (svc: K8sObject) => Object.fromEntries(svc.spec.ports.map((p: any) => [p.name, p.nodePort]));

describe('ServicesPerPort', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new ServicesPerPort(chart, 'Services', { namespace: 'uyuni', services: [WEB] });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('writes one Service per logical service, in table order, selecting its component', () => {
    const objects = synth({ services: ALL_FEATURES });
    expect(objects.map((o) => o.metadata.name)).toEqual(ALL_FEATURES.map((s) => s.name));
    for (const spec of ALL_FEATURES) {
      const svc = named(objects, spec.name);
      expect(svc.metadata.namespace).toBe('uyuni');
      expect(svc.metadata.labels).toEqual({
        'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': spec.component, 'app.kubernetes.io/managed-by': 'uyuni-cdk',
      });
      expect(svc.spec.selector).toEqual({ 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': spec.component });
    }
  });

  it('makes every Service a ClusterIP by default, with named ports, target ports and protocols, no node port', () => {
    const [web] = synth();
    expect(web.spec).toEqual({
      type: 'ClusterIP',
      selector: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' },
      ports: [{ name: 'http', port: 80, targetPort: 80, protocol: 'TCP' }],
    });
    expect(web.metadata.annotations).toBeUndefined();
    for (const svc of synth({ services: ALL_FEATURES.filter((s) => !s.fixed) })) {
      expect(svc.spec.type).toBe('ClusterIP');
      expect(svc.spec).not.toHaveProperty('externalTrafficPolicy');
      for (const p of svc.spec.ports) expect(p).not.toHaveProperty('nodePort');
    }
  });

  it('writes the target port and UDP of the table', () => {
    const objects = synth({ services: PROXY_SERVICES });
    expect(named(objects, 'ssh').spec.ports).toEqual([{ name: 'ssh', port: 8022, targetPort: 22, protocol: 'TCP' }]);
    expect(named(objects, 'tftp').spec.ports).toEqual([{ name: 'tftp', port: 69, targetPort: 69, protocol: 'UDP' }]);
  });

  it('labels and selects by the product given (partOf)', () => {
    const [web] = synth({ partOf: 'uyuni-proxy' });
    expect(web.metadata.labels!['app.kubernetes.io/part-of']).toBe('uyuni-proxy');
    expect(web.spec.selector['app.kubernetes.io/part-of']).toBe('uyuni-proxy');
  });

  describe('NodePort', () => {
    it('uses the table\'s node ports when none is configured', () => {
      const objects = server({ salt: { type: 'NodePort' }, reportdb: { type: 'NodePort' }, tomcat: { type: 'NodePort' } });
      expect(named(objects, 'salt').spec.type).toBe('NodePort');
      expect(nodePorts(named(objects, 'salt'))).toEqual({ publish: 30005, request: 30006 });
      expect(nodePorts(named(objects, 'reportdb'))).toEqual({ pgsql: 30032 });
      expect(nodePorts(named(objects, 'tomcat'))).toEqual({ debug: 30003 });
    });

    it('uses the configured node port of a port, the table\'s for the others', () => {
      const salt = named(server({ salt: { type: 'NodePort', nodePorts: { publish: 31505 } } }), 'salt');
      expect(nodePorts(salt)).toEqual({ publish: 31505, request: 30006 });
    });

    it('leaves a port without a table node port to Kubernetes', () => {
      const [web] = synth({ exposure: { web: { type: 'NodePort' } } });
      expect(web.spec.type).toBe('NodePort');
      expect(web.spec.ports[0]).not.toHaveProperty('nodePort');
    });

    it('writes node ports only on NodePort Services', () => {
      const objects = server({ salt: { type: 'LoadBalancer', nodePorts: { publish: 31505 } }, reportdb: { type: 'ClusterIP', nodePorts: { pgsql: 31432 } } });
      for (const name of ['salt', 'reportdb']) for (const p of named(objects, name).spec.ports) expect(p).not.toHaveProperty('nodePort');
    });

    it('keeps the client addresses only on LoadBalancers', () => {
      expect(named(server({ salt: { type: 'NodePort' } }), 'salt').spec).not.toHaveProperty('externalTrafficPolicy');
    });
  });

  describe('LoadBalancer', () => {
    it('keeps the client addresses (externalTrafficPolicy Local)', () => {
      const salt = named(server({ salt: { type: 'LoadBalancer' } }), 'salt');
      expect(salt.spec.type).toBe('LoadBalancer');
      expect(salt.spec.externalTrafficPolicy).toBe('Local');
      expect(salt.spec).not.toHaveProperty('loadBalancerIP');
      expect(salt.spec).not.toHaveProperty('sessionAffinity');
    });

    it('asks for no address on a NodePort', () => {
      expect(named(server({ reportdb: { type: 'NodePort', loadBalancerIP: '192.0.2.11' } }), 'reportdb').spec).not.toHaveProperty('loadBalancerIP');
    });

    it('asks for the configured address as a LoadBalancer', () => {
      expect(named(server({ salt: { type: 'LoadBalancer', loadBalancerIP: '192.0.2.10' } }), 'salt').spec.loadBalancerIP).toBe('192.0.2.10');
    });
  });

  it('writes the annotations of a Service, whatever its type, and only on it', () => {
    const shared = { 'metallb.universe.tf/allow-shared-ip': 'uyuni' };
    const objects = server({ salt: { type: 'LoadBalancer', annotations: shared }, web: { type: 'ClusterIP', annotations: { a: 'b' } } });
    expect(named(objects, 'salt').metadata.annotations).toEqual(shared);
    expect(named(objects, 'web').metadata.annotations).toEqual({ a: 'b' });
    expect(named(objects, 'cobbler').metadata.annotations).toBeUndefined();
  });

  describe('the tftp row', () => {
    it('is always a LoadBalancer with ClientIP affinity that keeps client addresses', () => {
      const tftp = named(synth({ services: ALL_FEATURES }), 'tftp');
      expect(tftp.metadata.labels!['app.kubernetes.io/component']).toBe('tftp');
      expect(tftp.spec).toEqual({
        type: 'LoadBalancer',
        sessionAffinity: 'ClientIP',
        externalTrafficPolicy: 'Local',
        selector: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'tftp' },
        ports: [{ name: 'tftp', port: 69, targetPort: 69, protocol: 'UDP' }],
      });
    });

    it('keeps its fixed type whatever the exposure says, but takes its annotations', () => {
      for (const type of ['ClusterIP', 'NodePort'] as const) {
        const tftp = named(server({ tftp: { type, nodePorts: { tftp: 30069 }, annotations: { a: 'b' } } }), 'tftp');
        expect(tftp.spec).toMatchObject({ type: 'LoadBalancer', sessionAffinity: 'ClientIP', externalTrafficPolicy: 'Local' });
        expect(tftp.spec.ports[0]).not.toHaveProperty('nodePort');
        expect(tftp.metadata.annotations).toEqual({ a: 'b' });
      }
    });

    it('takes its configured address', () => {
      expect(named(server({ tftp: { type: 'ClusterIP', loadBalancerIP: '192.0.2.69' } }), 'tftp').spec.loadBalancerIP).toBe('192.0.2.69');
    });
  });

  it('exposes the Services it made', () => {
    const chart = Testing.chart();
    const s = new ServicesPerPort(chart, 'Services', { namespace: 'uyuni', services: ALL_FEATURES });
    expect(s.services.map((x) => x.name)).toEqual(ALL_FEATURES.map((x) => x.name));
  });
});
