import type { UyuniConfig } from '../config/schema';
import { UyuniNamespace } from '../constructs/namespace';
import { ProxyDeployment } from '../constructs/proxy-deployment';
import { Claims } from '../constructs/claims';
import { ServicesPerPort } from '../constructs/services-per-port';
import { PROXY_SERVICES } from '../model/ports';
import type { VolumeSpec } from '../model/volumes';
import { PlanApp } from './plan-app';
import { claimOf } from './server-props';

/** The squid cache volume of the proxy. */
export const SQUID_CACHE: VolumeSpec = { name: 'squid-cache', mountPath: '/var/cache/squid', size: '10Gi', owner: 'flow' };

/**
 * The proxy plan (docs/upstream.md, proxy): namespace → squid cache → Services from the proxy
 * port table → Deployment uyuni-proxy, which needs the user's config Secret.
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
    defaultStepTimeoutSeconds: config.timeouts.defaultStepSeconds,
    deadlineSeconds: config.timeouts.deadlineSeconds,
  });
  plan.addStep('namespace', { description: `namespace ${ns}` }, (chart) => {
    new UyuniNamespace(chart, 'Namespace', { name: ns, partOf: 'uyuni-proxy', component: 'proxy' });
  });
  plan.addStep('volumes', { description: 'squid cache claim' }, (chart) => {
    // proxy.cache sizes and classes the claim like a per-claim override does a server claim.
    new Claims(chart, 'Claims', { namespace: ns, partOf: 'uyuni-proxy', claims: [claimOf(config, SQUID_CACHE, proxy.cache)] });
  });
  plan.addStep('services', { description: `Services ${PROXY_SERVICES.map((s) => s.name).join(', ')}` }, (chart) => {
    new ServicesPerPort(chart, 'Services', { namespace: ns, services: PROXY_SERVICES, exposure: proxy.services, partOf: 'uyuni-proxy' });
  });
  plan.addStep('proxy', {
    description: 'Deployment uyuni-proxy (httpd, salt-broker, squid, ssh, tftpd)',
    requires: [{
      kind: 'Secret',
      name: proxy.configSecret,
      namespace: ns,
      keys: ['config.yaml', 'httpd.yaml', 'ssh.yaml'],
      ifMissing: 'fail',
      message: `the proxy configuration: generate it on the server (mgrpxy / "Proxy Configuration" in the web UI), then: tar xf config.tar.gz && kubectl -n ${ns} create secret generic ${proxy.configSecret} --from-file=config.yaml --from-file=httpd.yaml --from-file=ssh.yaml`,
    }],
  }, (chart) => {
    new ProxyDeployment(chart, 'Proxy', {
      namespace: ns, images: config.images, timezone: config.timezone, configSecret: proxy.configSecret, cacheClaim: SQUID_CACHE.name,
    });
  });
  return plan;
}
