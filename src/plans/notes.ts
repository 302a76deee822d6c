/**
 * The post-install notes of a server plan (as Helm's NOTES.txt): its URL, the first
 * administrator's Secret, which DNS name points where and the ports clients must reach, from
 * the configuration and the one port table (src/model/ports.ts). The runtime only shows them.
 */
import type { UyuniConfig } from '../config/schema';
import { CREDENTIALS } from '../model/credentials';
import type { PlanNotes } from '../plan/types';
import { serverServicesOf } from './server-props';

/**
 * The ports clients (and proxies) use besides the web's, by Service: what they are for. (The hub
 * API arrives through the ingress, at /hub/rpc/api.)
 */
const CLIENT_SERVICES: Readonly<Record<string, string>> = {
  salt: 'salt',
  tftp: 'TFTP (network boot)',
};

/** `migratedFrom`: the old server, whose users the migrated one keeps. */
export function serverNotes(config: UyuniConfig, opts: { migratedFrom?: string } = {}): PlanNotes {
  const { fqdn, ingress } = config;
  const typeOf = (service: string) => config.services[service]?.type ?? 'ClusterIP';
  const className = ingress.className ?? ingress.type;
  const controller = `the address of the ingress controller (ingress class ${className})`;
  const saltRouted = ingress.type === 'traefik' && typeOf('salt') === 'ClusterIP';
  const services = serverServicesOf(config);
  const exposure = (service: string, port: { nodePort?: number; name: string }) => {
    const t = service === 'tftp' ? 'LoadBalancer' : typeOf(service);
    if (t === 'NodePort') return `Service ${service} (NodePort ${config.services[service]?.nodePorts?.[port.name] ?? port.nodePort ?? 'assigned by Kubernetes'}, on every node)`;
    return `Service ${service} (${t}${t === 'ClusterIP' ? ': inside the cluster only' : ''})`;
  };
  const web = ingress.type === 'none' ? exposure('web', { name: 'http' }) : `the ingress controller (ingress class ${className})`;
  const ports: Array<PlanNotes['ports'][number]> = [
    { port: 80, protocol: 'TCP', what: 'web UI and clients\' repositories (HTTP)', via: web },
    ...(ingress.type === 'none' ? [] : [{ port: 443, protocol: 'TCP' as const, what: 'web UI and API (HTTPS)', via: web }]),
  ];
  for (const svc of services.filter((s) => CLIENT_SERVICES[s.name])) {
    for (const p of svc.ports) {
      const via = svc.name === 'salt' && saltRouted ? `the ingress controller (Traefik entry point salt-${p.name}, IngressRouteTCP)` : exposure(svc.name, p);
      ports.push({ port: p.port, protocol: p.protocol, what: `${CLIENT_SERVICES[svc.name]}${svc.ports.length > 1 ? ` ${p.name}` : ''}`, via });
    }
  }
  // TFTP in the node's network has no Service: it answers on the node's address.
  if (config.tftp.enabled && config.tftp.hostNetwork) ports.push({ port: 69, protocol: 'UDP', what: CLIENT_SERVICES.tftp, via: 'the node the tftp pod runs on (tftp.hostNetwork)' });
  const dns = [{ name: fqdn, pointTo: ingress.type === 'none' ? `the address of ${exposure('web', { name: 'http' })}` : controller }];
  // A LoadBalancer Service of the server answers on its own address: clients reach it at the fqdn too.
  for (const svc of services.filter((s) => CLIENT_SERVICES[s.name] && (s.name === 'tftp' || typeOf(s.name) === 'LoadBalancer'))) {
    dns.push({ name: fqdn, pointTo: `also the address of Service ${svc.name} (LoadBalancer): give it the same address (loadBalancerIP, or a shared address as MetalLB's metallb.universe.tf/allow-shared-ip)` });
  }
  return {
    url: `https://${fqdn}/`,
    ...(opts.migratedFrom
      ? { adminFrom: opts.migratedFrom }
      : { admin: { secret: CREDENTIALS.admin.secret, usernameKey: 'username', passwordKey: 'password' } }),
    dns,
    ports,
  };
}
