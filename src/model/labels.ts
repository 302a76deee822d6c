import { LABELS, MANAGED_BY } from '../plan/types';

/**
 * The product an object belongs to: `uyuni` for the server, `uyuni-proxy` for the proxy,
 * `uyuni-node-services` for pods on systemd-backed nodes (its own value, so `destroy` of that
 * plan never selects the server's objects), `uyuni-backup` for the backups (their claim outlives
 * a `destroy --purge-volumes` of the server's plans).
 */
export type PartOf = 'uyuni' | 'uyuni-proxy' | 'uyuni-node-services' | 'uyuni-backup' | 'uyuni-db-archive';

/** What a pod or object is (app.kubernetes.io/component); pod components as the chart names them. */
export type Component =
  | 'server' | 'db' | 'hub-xmlrpc' | 'coco' | 'tftp' | 'proxy' | 'proxy-tftp'
  | 'step' | 'tls' | 'storage' | 'network' | 'node-service';

/** The labels every object carries; selectors use part-of + component. */
export function commonLabels(partOf: PartOf, component: Component): Record<string, string> {
  return { [LABELS.partOf]: partOf, [LABELS.component]: component, [LABELS.managedBy]: MANAGED_BY };
}

/** The labels a Service or Deployment selects its pods by (stable: a selector is immutable). */
export function selectorLabels(partOf: PartOf, component: Component): Record<string, string> {
  return { [LABELS.partOf]: partOf, [LABELS.component]: component };
}
