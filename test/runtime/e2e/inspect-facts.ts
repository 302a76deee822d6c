/**
 * What the inspect Jobs print on the simulator, for the e2e tests of the upgrade and migration
 * plans: uyuni-inspect (server image, etc-rhn) and uyuni-inspect-db (server-postgresql, the
 * database claim), as `key=value` lines. The defaults pass every gate of dist/upgrade.
 */
export const lines = (o: Record<string, string>) => Object.entries(o).map(([k, v]) => `${k}=${v}`);

/** The facts of a server that is the current product, has its setup marker where the images look, and a CA. */
export const SERVER_FACTS: Readonly<Record<string, string>> = {
  product: 'uyuni', current_product: 'uyuni', uyuni_release: '2026.08', current_release: '2026.03', fqdn: 'uyuni.example.com',
  db_name: 'susemanager', setup_marker: '/var/spacewalk/.MANAGER_SETUP_COMPLETE', ca_fingerprint: 'AB:CD:EF',
};

export const inspectJobs = (server: Record<string, string> = {}, db: Record<string, string> = {}) => ({
  'uyuni-inspect': { logs: ['uyuni-inspect: reading /etc/rhn', ...lines({ ...SERVER_FACTS, ...server })] },
  'uyuni-inspect-db': { logs: lines({ current_pg_version: '16', image_pg_version: '18', ...db }) },
});

/**
 * The claims a server being upgraded has and an install of this version does not: an install of
 * PostgreSQL 16 (upstream chart, mgradm) keeps the database on claim `var-pgsql` and its setup
 * marker on claim `root`, which upgrade's inspect Jobs mount. Without them kube-scheduler leaves
 * those Jobs' pods Pending (`persistentvolumeclaim "root" not found`), and so does the simulator.
 */
export function putClaims(sim: { put(o: unknown): void }, namespace = 'uyuni', claims = ['root', 'var-pgsql']): void {
  for (const name of claims) {
    sim.put({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  }
}
