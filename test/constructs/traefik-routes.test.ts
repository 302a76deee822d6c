import { Testing } from 'cdk8s';
import { STRIP_PREFIXES, TraefikRoutes, TraefikRoutesProps } from '../../src/constructs/traefik-routes';
import { EXPORTER_PATHS } from '../../src/constructs/uyuni-ingresses';
import { K8sObject } from '../helpers/validate';

const synth = (props: Partial<TraefikRoutesProps> = {}): K8sObject[] => {
  const chart = Testing.chart();
  new TraefikRoutes(chart, 'Routes', { namespace: 'uyuni', ...props });
  return Testing.synth(chart);
};
const named = (objects: K8sObject[], name: string) => {
  const found = objects.find((o) => o.metadata.name === name);
  if (!found) throw new Error(`no object ${name} in ${objects.map((o) => o.metadata.name).join(', ')}`);
  return found;
};
const tcpRoutes = (objects: K8sObject[]) => objects.filter((o) => o.kind === 'IngressRouteTCP');
const backendOf = (route: K8sObject) => {
  const [only] = route.spec.routes;
  return { entryPoints: route.spec.entryPoints, match: only.match, services: only.services };
};

describe('TraefikRoutes', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new TraefikRoutes(chart, 'Routes', { namespace: 'uyuni' });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('renders the HTTPS-redirect and strip-prefix Middlewares of traefik.io/v1alpha1', () => {
    const objects = synth();
    const redirect = named(objects, 'uyuni-https-redirect');
    expect([redirect.apiVersion, redirect.kind]).toEqual(['traefik.io/v1alpha1', 'Middleware']);
    expect(redirect.spec).toEqual({ redirectScheme: { scheme: 'https', permanent: true } });
    const strip = named(objects, 'uyuni-strip-prefixes');
    expect(strip.kind).toBe('Middleware');
    expect(strip.spec).toEqual({
      stripPrefix: { prefixes: ['/postgresql-exporter', '/node-exporter', '/tasko-exporter', '/tasko-jmx', '/tomcat-jmx', '/saline'] },
    });
  });

  it('strips every exporter path the Ingresses route', () => {
    expect(STRIP_PREFIXES).toEqual(expect.arrayContaining(EXPORTER_PATHS.map((p) => p.path)));
  });

  it('routes salt 4505 and 4506 through IngressRouteTCP', () => {
    const objects = synth();
    expect(tcpRoutes(objects).map((o) => o.metadata.name)).toEqual(['salt-publish-route', 'salt-request-route']);
    expect(backendOf(named(objects, 'salt-publish-route'))).toEqual({
      entryPoints: ['salt-publish'], match: 'HostSNI(`*`)', services: [{ name: 'salt', port: 4505 }],
    });
    expect(backendOf(named(objects, 'salt-request-route'))).toEqual({
      entryPoints: ['salt-request'], match: 'HostSNI(`*`)', services: [{ name: 'salt', port: 4506 }],
    });
  });

  it('renders no IngressRouteTCP when salt routes are off', () => {
    const objects = synth({ saltRoutes: false });
    expect(tcpRoutes(objects)).toEqual([]);
    expect(objects.map((o) => o.kind)).toEqual(['Middleware', 'Middleware']);
  });

  it('adds the tomcat, search and taskomatic debug routes with debugJava', () => {
    const objects = synth({ debugJava: true });
    expect(tcpRoutes(objects)).toHaveLength(5);
    expect(backendOf(named(objects, 'tomcat-debug-route'))).toEqual({
      entryPoints: ['tomcat-debug'], match: 'HostSNI(`*`)', services: [{ name: 'tomcat', port: 8003 }],
    });
    expect(backendOf(named(objects, 'search-debug-route'))).toEqual({
      entryPoints: ['search-debug'], match: 'HostSNI(`*`)', services: [{ name: 'search', port: 8002 }],
    });
    expect(backendOf(named(objects, 'tasko-debug-route'))).toEqual({
      entryPoints: ['tasko-debug'], match: 'HostSNI(`*`)', services: [{ name: 'taskomatic', port: 8001 }],
    });
  });

  it('renders only the debug routes with debugJava and without salt routes', () => {
    const names = tcpRoutes(synth({ debugJava: true, saltRoutes: false })).map((o) => o.metadata.name);
    expect(names).toEqual(['tomcat-debug-route', 'search-debug-route', 'tasko-debug-route']);
  });

  it('puts the namespace, the labels and the ingress class on every object', () => {
    const labels = { 'app.kubernetes.io/part-of': 'uyuni' };
    const objects = synth({ debugJava: true, labels, ingressClass: 'traefik-internal' });
    expect(objects).toHaveLength(7);
    for (const o of objects) {
      expect(o.metadata.namespace).toBe('uyuni');
      expect(o.metadata.labels).toEqual(labels);
      expect(o.metadata.annotations).toEqual({ 'kubernetes.io/ingress.class': 'traefik-internal' });
    }
  });

  it("annotates the ingress class 'traefik' by default", () => {
    for (const o of synth()) expect(o.metadata.annotations).toEqual({ 'kubernetes.io/ingress.class': 'traefik' });
  });

  it('exposes the Middlewares and their Ingress reference form', () => {
    const chart = Testing.chart();
    const routes = new TraefikRoutes(chart, 'Routes', { namespace: 'uyuni' });
    expect(routes.httpsRedirect.name).toBe('uyuni-https-redirect');
    expect(routes.stripPrefixes.name).toBe('uyuni-strip-prefixes');
    expect(TraefikRoutes.middlewareRef('uyuni', routes.stripPrefixes.name)).toBe('uyuni-uyuni-strip-prefixes@kubernetescrd');
  });
});
