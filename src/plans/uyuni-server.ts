import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { installPlan } from './install';
import { checkedProps, FLOW_SECTIONS, FlowSection, UyuniSettings } from './settings';

/** The server's settings: the keys of uyuni.yaml without the proxy and the flows. */
export type UyuniServerProps = Omit<UyuniSettings, 'proxy' | FlowSection>;

/**
 * An Uyuni server, the objects of the install plan (README "Set up"), in a chart of your own app:
 * its namespace, claims, TLS, Services and ConfigMap uyuni-config, Deployment db, the Ingresses
 * and Deployment uyuni, one child construct per step (`namespace`, `volumes`, `tls`, …).
 *
 * The credentials Secrets are not among them (synth never writes passwords): create them before
 * the server starts (docs/library.md). Props are checked as uyuni.yaml is: a bad one throws
 * ConfigError naming it.
 */
export class UyuniServer extends Construct {
  /** The props with every default filled in. */
  readonly config: UyuniConfig;
  /** The namespace of the server's objects. */
  readonly namespace: string;
  /** The server's FQDN. */
  readonly fqdn: string;

  constructor(scope: Construct, id: string, props: UyuniServerProps) {
    super(scope, id);
    this.config = checkedProps(props, `UyuniServer ${this.node.path}`, 'install', [...FLOW_SECTIONS, 'proxy']);
    this.namespace = this.config.namespace;
    this.fqdn = this.config.fqdn;
    installPlan(this.config).buildInto(this);
  }
}
