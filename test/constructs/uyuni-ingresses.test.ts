import { Testing } from 'cdk8s';
import { EXPORTER_PATHS, NOSSL_PATHS, UyuniIngresses, UyuniIngressesProps } from '../../src/constructs/uyuni-ingresses';
import { K8sObject, validateObject } from '../helpers/validate';

const FQDN = 'uyuni.example.com';

const synth = (props: Partial<UyuniIngressesProps> = {}): K8sObject[] => {
  const chart = Testing.chart();
  new UyuniIngresses(chart, 'Ingresses', { namespace: 'uyuni', fqdn: FQDN, flavour: 'traefik', ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  return objects;
};
const named = (objects: K8sObject[], name: string) => {
  const found = objects.find((o) => o.metadata.name === name);
  if (!found) throw new Error(`no Ingress ${name} in ${objects.map((o) => o.metadata.name).join(', ')}`);
  return found;
};
const paths = (ingress: K8sObject): any[] => ingress.spec.rules.flatMap((r: any) => r.http.paths);
/** path → service:port of an Ingress's rules. */
const routes = (ingress: K8sObject) => Object.fromEntries(paths(ingress).map((p) => [p.path, `${p.backend.service.name}:${p.backend.service.port.number}`]));
const traefikAnnotations = (ingress: K8sObject) =>
  Object.keys(ingress.metadata.annotations ?? {}).filter((k) => k.startsWith('traefik.'));

const EXPORTER_ROUTES = {
  '/postgresql-exporter': 'tomcat-internal:9187',
  '/node-exporter': 'tomcat-internal:9100',
  '/tasko-exporter': 'taskomatic-internal:9800',
  '/tasko-jmx': 'taskomatic-internal:5557',
  '/tomcat-jmx': 'tomcat-internal:5556',
};

describe('UyuniIngresses', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new UyuniIngresses(chart, 'Ingresses', { namespace: 'uyuni', fqdn: FQDN, flavour: 'traefik' });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('renders the ssl, exporters, ssl-redirect and nossl Ingresses for traefik', () => {
    const objects = synth();
    expect(objects.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'networking.k8s.io/v1 Ingress uyuni/uyuni-ingress-ssl',
      'networking.k8s.io/v1 Ingress uyuni/exporters-ingress-ssl',
      'networking.k8s.io/v1 Ingress uyuni/uyuni-ingress-ssl-redirect',
      'networking.k8s.io/v1 Ingress uyuni/uyuni-ingress-nossl',
    ]);
    for (const o of objects) {
      expect(o.spec.ingressClassName).toBe('traefik');
      expect(o.spec.rules.map((r: any) => r.host)).toEqual([FQDN]);
    }
  });

  it('serves the web UI over HTTPS for the FQDN at the lowest priority, stripping the exporter prefixes', () => {
    const ssl = named(synth(), 'uyuni-ingress-ssl');
    expect(ssl.spec.tls).toEqual([{ hosts: [FQDN], secretName: 'uyuni-cert' }]);
    expect(routes(ssl)).toEqual({ '/': 'web:80' });
    expect(ssl.metadata.annotations).toEqual({
      'traefik.ingress.kubernetes.io/router.tls': 'true',
      'traefik.ingress.kubernetes.io/router.tls.domains.n.main': FQDN,
      'traefik.ingress.kubernetes.io/router.entrypoints': 'websecure',
      'traefik.ingress.kubernetes.io/router.priority': '1',
      'traefik.ingress.kubernetes.io/router.middlewares': 'uyuni-uyuni-strip-prefixes@kubernetescrd',
    });
  });

  it('routes the exporters over HTTPS to their internal Services', () => {
    const exporters = named(synth({ tlsSecret: 'my-cert' }), 'exporters-ingress-ssl');
    expect(exporters.spec.tls).toEqual([{ hosts: [FQDN], secretName: 'my-cert' }]);
    expect(routes(exporters)).toEqual(EXPORTER_ROUTES);
    expect(exporters.metadata.annotations).toEqual({
      'traefik.ingress.kubernetes.io/router.tls': 'true',
      'traefik.ingress.kubernetes.io/router.entrypoints': 'websecure',
      'traefik.ingress.kubernetes.io/router.priority': '100',
      'traefik.ingress.kubernetes.io/router.middlewares': 'uyuni-uyuni-strip-prefixes@kubernetescrd',
    });
  });

  it('redirects plain HTTP to HTTPS through the namespaced redirect Middleware', () => {
    const redirect = named(synth({ namespace: 'mlm' }), 'uyuni-ingress-ssl-redirect');
    expect(redirect.spec.tls).toBeUndefined();
    expect(routes(redirect)).toEqual({ '/': 'web:80' });
    expect(redirect.metadata.annotations).toEqual({
      'traefik.ingress.kubernetes.io/router.entrypoints': 'web',
      'traefik.ingress.kubernetes.io/router.priority': '1',
      'traefik.ingress.kubernetes.io/router.middlewares': 'mlm-uyuni-https-redirect@kubernetescrd',
    });
  });

  it('routes the hub XML-RPC API to hub-xmlrpc:2830 with hubApi', () => {
    expect(routes(named(synth({ hubApi: true }), 'uyuni-ingress-ssl-redirect'))).toEqual({
      '/': 'web:80', '/hub/rpc/api': 'hub-xmlrpc:2830',
    });
  });

  it('serves the hub XML-RPC API over HTTPS from hubapi-ingress-ssl, for nginx too, and only with hubApi', () => {
    for (const flavour of ['traefik', 'nginx'] as const) {
      const hub = named(synth({ flavour, hubApi: true }), 'hubapi-ingress-ssl');
      expect(routes(hub)).toEqual({ '/hub/rpc/api': 'hub-xmlrpc:2830' });
      expect(hub.spec.tls).toEqual([{ hosts: [FQDN], secretName: 'uyuni-cert' }]);
    }
    expect(synth({ hubApi: true }).find((o) => o.metadata.name === 'hubapi-ingress-ssl')!.metadata.annotations)
      .toMatchObject({ 'traefik.ingress.kubernetes.io/router.entrypoints': 'websecure', 'traefik.ingress.kubernetes.io/router.priority': '100' });
    expect(synth().map((o) => o.metadata.name)).not.toContain('hubapi-ingress-ssl');
  });

  it('serves the plain-HTTP paths and the exporters without TLS, above the redirect', () => {
    const nossl = named(synth(), 'uyuni-ingress-nossl');
    expect(nossl.spec.tls).toBeUndefined();
    expect(routes(nossl)).toEqual({
      '/pub': 'web:80',
      '/rhn/kickstart/DownloadFile': 'web:80',
      '/rhn/common/DownloadFile': 'web:80',
      '/rhn/rpc/api': 'web:80',
      '/rpc/api': 'web:80',
      '/rhn/errors': 'web:80',
      '/rhn/ty/TinyUrl': 'web:80',
      '/rhn/websocket': 'web:80',
      '/rhn/metrics': 'web:80',
      '/cblr': 'web:80',
      '/httpboot': 'web:80',
      '/images': 'web:80',
      '/cobbler': 'web:80',
      '/os-images': 'web:80',
      '/tftp': 'web:80',
      '/docs': 'web:80',
      ...EXPORTER_ROUTES,
    });
    expect(nossl.metadata.annotations).toEqual({
      'traefik.ingress.kubernetes.io/router.tls': 'false',
      'traefik.ingress.kubernetes.io/router.entrypoints': 'web',
      'traefik.ingress.kubernetes.io/router.priority': '100',
      'traefik.ingress.kubernetes.io/router.middlewares': 'uyuni-uyuni-strip-prefixes@kubernetescrd',
    });
  });

  it('drops the exporters Ingress and the exporter paths when monitoring is off', () => {
    const objects = synth({ monitoring: false });
    expect(objects.map((o) => o.metadata.name)).not.toContain('exporters-ingress-ssl');
    expect(Object.keys(routes(named(objects, 'uyuni-ingress-nossl')))).toEqual([...NOSSL_PATHS]);
  });

  it('sends the web paths to the configured web Service', () => {
    const objects = synth({ web: { service: 'uyuni-web', port: 8080 } });
    expect(routes(named(objects, 'uyuni-ingress-ssl'))).toEqual({ '/': 'uyuni-web:8080' });
    expect(routes(named(objects, 'uyuni-ingress-ssl-redirect'))).toEqual({ '/': 'uyuni-web:8080' });
    const nossl = routes(named(objects, 'uyuni-ingress-nossl'));
    for (const p of NOSSL_PATHS) expect(nossl[p]).toBe('uyuni-web:8080');
    for (const e of EXPORTER_PATHS) expect(nossl[e.path]).toBe(`${e.service}:${e.port}`);
  });

  it('uses only Prefix paths without regular-expression characters', () => {
    for (const flavour of ['traefik', 'nginx'] as const) {
      for (const ingress of synth({ flavour, hubApi: true })) {
        for (const p of paths(ingress)) {
          expect(p.pathType).toBe('Prefix');
          expect(p.path).toMatch(/^\/[A-Za-z0-9_\-/]*$/);
        }
      }
    }
  });

  describe('with nginx', () => {
    const objects = synth({ flavour: 'nginx' });

    it('renders no ssl-redirect Ingress, as ingress-nginx redirects to HTTPS itself', () => {
      expect(objects.map((o) => o.metadata.name)).toEqual(['uyuni-ingress-ssl', 'exporters-ingress-ssl', 'uyuni-ingress-nossl']);
    });

    it('writes no traefik annotation on any Ingress', () => {
      for (const o of objects) expect(traefikAnnotations(o)).toEqual([]);
    });

    it('opts only the nossl Ingress out of the HTTPS redirect', () => {
      expect(named(objects, 'uyuni-ingress-ssl').metadata.annotations).toBeUndefined();
      expect(named(objects, 'exporters-ingress-ssl').metadata.annotations).toBeUndefined();
      expect(named(objects, 'uyuni-ingress-nossl').metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' });
    });

    it("defaults the ingress class to 'nginx' and keeps TLS on the HTTPS Ingresses", () => {
      for (const o of objects) expect(o.spec.ingressClassName).toBe('nginx');
      expect(named(objects, 'uyuni-ingress-ssl').spec.tls).toEqual([{ hosts: [FQDN], secretName: 'uyuni-cert' }]);
      expect(named(objects, 'uyuni-ingress-nossl').spec.tls).toBeUndefined();
    });
  });

  it('writes the configured ingress class', () => {
    for (const o of synth({ flavour: 'nginx', className: 'public' })) expect(o.spec.ingressClassName).toBe('public');
  });

  it('merges the user annotations over ours, per Ingress', () => {
    const objects = synth({
      annotations: {
        ssl: { 'cert-manager.io/issuer': 'uyuni-ca-issuer', 'traefik.ingress.kubernetes.io/router.priority': '5' },
        sslRedirect: { a: 'redirect' },
        nossl: { a: 'nossl' },
        exporters: { a: 'exporters' },
      },
    });
    const ssl = named(objects, 'uyuni-ingress-ssl').metadata.annotations!;
    expect(ssl['cert-manager.io/issuer']).toBe('uyuni-ca-issuer');
    expect(ssl['traefik.ingress.kubernetes.io/router.priority']).toBe('5');
    expect(ssl['traefik.ingress.kubernetes.io/router.entrypoints']).toBe('websecure');
    expect(ssl.a).toBeUndefined();
    expect(named(objects, 'uyuni-ingress-ssl-redirect').metadata.annotations!.a).toBe('redirect');
    expect(named(objects, 'uyuni-ingress-nossl').metadata.annotations!.a).toBe('nossl');
    expect(named(objects, 'exporters-ingress-ssl').metadata.annotations!.a).toBe('exporters');
  });

  it('writes the user annotations for nginx too', () => {
    const ssl = named(synth({ flavour: 'nginx', annotations: { ssl: { 'cert-manager.io/issuer': 'ca' } } }), 'uyuni-ingress-ssl');
    expect(ssl.metadata.annotations).toEqual({ 'cert-manager.io/issuer': 'ca' });
  });

  it('puts the labels on every Ingress', () => {
    const labels = { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'network' };
    for (const o of synth({ labels, hubApi: true })) expect(o.metadata.labels).toEqual(labels);
  });
});
