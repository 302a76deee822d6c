import { Construct } from 'constructs';
import type { ProxyConfig, UyuniConfig } from '../config/schema';
import { proxyPlan } from './proxy';
import { checkedProps, FLOW_SECTIONS, FlowSection, Settings, UyuniSettings } from './settings';

/**
 * The proxy's settings: `proxy` as in uyuni.yaml, `fqdn` the server's, and the server-wide keys
 * it reads (images, volumes.storageClass, tls durations, timeouts).
 */
export type UyuniProxyProps = Omit<UyuniSettings, 'proxy' | FlowSection> & {
  /** The proxy: its FQDN, namespace, cache, tuning, Services. */
  readonly proxy: Settings<Omit<ProxyConfig, 'fqdn'>> & { readonly fqdn: string };
};

/**
 * An Uyuni proxy, the objects of the proxy plan (README "Proxy"), in a chart of your own app: its
 * namespace, the squid cache claim, Services web, salt, ssh and tftp, ConfigMap proxy-tuning and
 * Deployments uyuni-proxy and uyuni-proxy-tftp, one child construct per step.
 *
 * The proxy's configuration objects (ConfigMap proxy-configmap, Secrets httpd, ssh and
 * proxy-cert, ConfigMap uyuni-ca) come from the server's config tarball and are never
 * synthesized: create the first three as README "Proxy" shows; Job uyuni-proxy-certs (step
 * certs) makes proxy-cert and uyuni-ca from the tarball unless you made them.
 */
export class UyuniProxy extends Construct {
  /** The props with every default filled in. */
  readonly config: UyuniConfig;
  /** The namespace of the proxy's objects. */
  readonly namespace: string;
  /** The proxy's FQDN. */
  readonly fqdn: string;

  constructor(scope: Construct, id: string, props: UyuniProxyProps) {
    super(scope, id);
    this.config = checkedProps(props, `UyuniProxy ${this.node.path}`, 'proxy', FLOW_SECTIONS);
    const proxy = this.config.proxy!;
    this.namespace = proxy.namespace;
    this.fqdn = proxy.fqdn;
    proxyPlan(this.config).buildInto(this);
  }
}
