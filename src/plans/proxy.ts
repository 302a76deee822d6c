import type { ProxyConfig, UyuniConfig } from '../config/schema';
import { Claims } from '../constructs/claims';
import { UyuniNamespace } from '../constructs/namespace';
import { ProxyCertificate, proxyCertificateName, serverCaRequirement } from '../constructs/proxy-certificate';
import { ProxyCertsJob } from '../constructs/proxy-certs-job';
import { IssuedCertificate, PROXY_CONFIG, proxyConfigRequirements, ProxyTuning } from '../constructs/proxy-config';
import { PROXY_CONTAINERS, ProxyContainer, ProxyDeployment, ProxyDeploymentProps } from '../constructs/proxy-deployment';
import { ProxyTftpDeployment, ProxyTftpDeploymentProps } from '../constructs/proxy-tftp-deployment';
import { PROXY_NOSSL_INGRESS, ProxyTraefikRoutes } from '../constructs/proxy-traefik-routes';
import { ServicesPerPort } from '../constructs/services-per-port';
import { IMAGES, imageRef } from '../model/images';
import { containerPorts, ContainerPort, PROXY_SERVICES, PROXY_SQUID_PORT, proxyServices } from '../model/ports';
import { TLS_NAMES } from '../model/tls';
import type { VolumeSpec } from '../model/volumes';
import { configTimeouts, PlanApp } from './plan-app';
import { claimOf } from './server-props';


/** The step whose Job makes proxy-cert and uyuni-ca from the config tarball. */
const CERTS_STEP = 'certs';
/**
 * The squid cache volume of the proxy. proxy-helm sizes it from `max_cache_size_mb` of
 * config.yaml, which synth does not read: `proxy.cache.size` sizes it.
 */
export const SQUID_CACHE: VolumeSpec = { name: 'squid-cache', mountPath: '/var/cache/squid', size: '10Gi', owner: 'flow' };

/** Where the proxy's certificate is issued with `proxy.tls.issuer`: the server's namespace. */
export function issuedCertificate(config: UyuniConfig, proxy: ProxyConfig): IssuedCertificate | undefined {
  return proxy.tls.issuer ? { namespace: config.namespace, secret: proxyCertificateName(proxy.namespace) } : undefined;
}

/** The props of Deployment uyuni-proxy: images `proxy-<container>`, ports from the proxy's port table. */
export function proxyDeploymentProps(config: UyuniConfig, proxy: ProxyConfig): ProxyDeploymentProps {
  const each = <T>(f: (c: ProxyContainer) => T) => Object.fromEntries(PROXY_CONTAINERS.map((c) => [c, f(c)])) as Record<ProxyContainer, T>;
  const squid: ContainerPort[] = [{ containerPort: PROXY_SQUID_PORT }];
  return {
    namespace: proxy.namespace,
    images: each((c) => imageRef(config.images, { name: IMAGES.proxy(c) })),
    ports: each((c) => (c === 'squid' ? squid : containerPorts(PROXY_SERVICES, 'proxy', c))),
    cacheClaim: SQUID_CACHE.name,
    ...(proxy.dnsConfig ? { dnsConfig: proxy.dnsConfig } : {}),
  };
}

/** The props of Deployment uyuni-proxy-tftp. */
export function proxyTftpProps(config: UyuniConfig, proxy: ProxyConfig): ProxyTftpDeploymentProps {
  return {
    namespace: proxy.namespace,
    image: imageRef(config.images, { name: IMAGES.proxy('tftpd') }),
    hostNetwork: proxy.tftp.hostNetwork,
    ports: containerPorts(PROXY_SERVICES, 'proxy-tftp', 'tftpd'),
  };
}

/**
 * The proxy plan, as proxy-helm renders the proxy (docs/upstream.md §13): namespace → (with
 * proxy.tls.issuer: the proxy's Certificate in the server's namespace) → squid cache → Services
 * from the proxy port table → (Traefik routes) → (without proxy.tls.issuer: Job
 * uyuni-proxy-certs makes proxy-cert and uyuni-ca from the tarball) → ConfigMap proxy-tuning and
 * Deployment uyuni-proxy, which need the user's configuration objects → Deployment
 * uyuni-proxy-tftp.
 */
export function proxyPlan(config: UyuniConfig): PlanApp {
  const proxy = config.proxy;
  if (!proxy) throw new Error('the proxy plan needs a proxy section');
  const ns = proxy.namespace;
  const plan = new PlanApp({
    name: 'proxy',
    description: `Uyuni proxy ${proxy.fqdn} for ${config.fqdn} in namespace ${ns}`,
    namespace: ns,
    partOf: 'uyuni-proxy',
    ...configTimeouts(config),
  });
  const issued = issuedCertificate(config, proxy);
  // proxy-helm makes proxy-cert and uyuni-ca from the tarball itself (templates/cert.yaml @
  // 00f177a9); with proxy.tls.issuer they come from the server's Certificate instead.
  const derivedBy = issued ? undefined : ProxyCertsJob.NAME;
  // The certs step's Job makes them: `madeBy`, so a check of the whole plan before the first
  // write does not count them missing (src/runtime/decide/plan.ts `made-earlier`).
  const requirements = proxyConfigRequirements({ namespace: ns, fqdn: proxy.fqdn, issued, derivedBy })
    .map((r) => (derivedBy && (r.name === PROXY_CONFIG.cert || r.name === PROXY_CONFIG.ca) ? { ...r, madeBy: CERTS_STEP } : r));

  plan.addStep('namespace', { description: `namespace ${ns}` }, (chart) => {
    new UyuniNamespace(chart, 'Namespace', { name: ns, partOf: 'uyuni-proxy', component: 'proxy' });
  });
  if (issued) {
    plan.addStep('tls', {
      description: `Certificate ${issued.secret} for ${proxy.fqdn} in namespace ${issued.namespace}, from Issuer ${TLS_NAMES.caIssuer}`,
      requires: [serverCaRequirement(issued.namespace)],
    }, (chart) => {
      new ProxyCertificate(chart, 'Certificate', {
        namespace: issued.namespace, name: issued.secret, fqdn: proxy.fqdn, duration: config.tls.duration, renewBefore: config.tls.renewBefore,
      });
    });
  }
  plan.addStep('volumes', { description: `squid cache claim ${SQUID_CACHE.name}` }, (chart) => {
    // proxy.cache sizes and classes the claim like a per-claim override does a server claim.
    new Claims(chart, 'Claims', { namespace: ns, partOf: 'uyuni-proxy', claims: [claimOf(config, SQUID_CACHE, proxy.cache)] });
  });
  const services = proxyServices({ tftpService: !proxy.tftp.hostNetwork });
  plan.addStep('services', { description: `Services ${services.map((s) => s.name).join(', ')}` }, (chart) => {
    new ServicesPerPort(chart, 'Services', { namespace: ns, services, exposure: proxy.services, partOf: 'uyuni-proxy' });
  });
  if (proxy.ingress.type === 'traefik') {
    const notNodePort = (name: string) => (proxy.services[name]?.type ?? 'ClusterIP') !== 'NodePort';
    plan.addStep('ingress', {
      description: `Traefik routes for ssh and salt, Ingress ${PROXY_NOSSL_INGRESS} for ${proxy.fqdn}`,
    }, (chart) => {
      new ProxyTraefikRoutes(chart, 'Traefik', {
        namespace: ns, fqdn: proxy.fqdn, ingressClass: proxy.ingress.className, sshRoute: notNodePort('ssh'), saltRoutes: notNodePort('salt'),
      });
    });
  }
  if (derivedBy) {
    plan.addStep(CERTS_STEP, {
      description: `Secret ${PROXY_CONFIG.cert} and ConfigMap ${PROXY_CONFIG.ca} from the config tarball, unless you made them (Job ${derivedBy})`,
      requires: requirements.filter((r) => r.name === PROXY_CONFIG.configMap || r.name === PROXY_CONFIG.httpd),
    }, (chart) => {
      new ProxyCertsJob(chart, 'Certs', { namespace: ns, image: imageRef(config.images, { name: IMAGES.proxy('httpd') }) });
    });
  }
  plan.addStep('proxy', {
    description: `ConfigMap ${PROXY_CONFIG.tuning}, Deployment ${ProxyDeployment.NAME} (httpd, salt-broker, squid, ssh)`,
    requires: requirements,
  }, (chart) => {
    new ProxyTuning(chart, 'Tuning', { namespace: ns, squid: proxy.tuning.squid, ssh: proxy.tuning.ssh, apache: proxy.tuning.apache });
    new ProxyDeployment(chart, 'Proxy', proxyDeploymentProps(config, proxy));
  });
  plan.addStep('tftp', {
    description: `Deployment ${ProxyTftpDeployment.NAME}${proxy.tftp.hostNetwork ? ' (in the node\'s network)' : ''}`,
    requires: requirements.filter((r) => r.name === PROXY_CONFIG.configMap || r.name === PROXY_CONFIG.ca),
  }, (chart) => {
    new ProxyTftpDeployment(chart, 'Tftp', proxyTftpProps(config, proxy));
  });
  return plan;
}
