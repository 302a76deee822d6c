#!/usr/bin/env node
'use strict';
// `npm run import`: generates imports/<group>.ts offline from the CRDs pinned under schemas/.
// The CRD files of one API group are merged into one YAML first: `cdk8s import` writes one file
// per group, so importing them one by one would make each import overwrite the previous one.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.join(__dirname, '..');
const schemas = path.join(root, 'schemas');

// One entry per generated imports/<group>.ts; `env` points a run at another copy of the CRDs.
const groups = [
  {
    group: 'cert-manager.io',
    env: 'CERT_MANAGER_SCHEMAS',
    dir: path.join(schemas, 'cert-manager-v1.21.1'),
    files: ['cert-manager.io_certificates.yaml', 'cert-manager.io_issuers.yaml', 'cert-manager.io_clusterissuers.yaml'],
  },
  {
    group: 'traefik.io',
    env: 'TRAEFIK_SCHEMAS',
    dir: path.join(schemas, 'traefik-v3.7.11'),
    files: ['traefik.io_middlewares.yaml', 'traefik.io_ingressroutetcps.yaml'],
  },
];

const cdk8s = path.join(root, 'node_modules', '.bin', 'cdk8s');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-import-'));
// `cdk8s import` records each import in cdk8s.yaml; ours are temporary files, so keep cdk8s.yaml as it is.
const cdk8sYaml = path.join(root, 'cdk8s.yaml');
const cdk8sYamlBefore = fs.readFileSync(cdk8sYaml);
try {
  for (const { group, env, dir, files } of groups) {
    const from = process.env[env] || dir;
    const merged = path.join(tmp, `${group}.yaml`);
    fs.writeFileSync(merged, files.map((f) => fs.readFileSync(path.join(from, f), 'utf8').replace(/^---\s*\n/, '')).join('\n---\n'));
    execFileSync(cdk8s, ['import', merged, '--output', path.join(root, 'imports'), '--language', 'typescript', '--no-check-upgrade'],
      { stdio: 'inherit', cwd: root });
  }
} finally {
  fs.writeFileSync(cdk8sYaml, cdk8sYamlBefore);
  fs.rmSync(tmp, { recursive: true, force: true });
}
