#!/usr/bin/env node
'use strict';
// `npm run import`: generates imports/cert-manager.io.ts offline from the pinned cert-manager CRDs.
// The three CRD files are merged into one YAML first: importing them one by one would make each
// import of the cert-manager.io group overwrite the previous one.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.join(__dirname, '..');
const schemas = process.env.CERT_MANAGER_SCHEMAS
  || path.join(root, '..', 'shared', 'schemas', 'cert-manager-v1.21.1');
const files = ['cert-manager.io_certificates.yaml', 'cert-manager.io_issuers.yaml', 'cert-manager.io_clusterissuers.yaml'];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-import-'));
// `cdk8s import` records the import in cdk8s.yaml; ours is a temporary file, so keep cdk8s.yaml as it is.
const cdk8sYaml = path.join(root, 'cdk8s.yaml');
const cdk8sYamlBefore = fs.readFileSync(cdk8sYaml);
try {
  const merged = path.join(tmp, 'cert-manager.yaml');
  fs.writeFileSync(merged, files.map((f) => fs.readFileSync(path.join(schemas, f), 'utf8').replace(/^---\s*\n/, '')).join('\n---\n'));
  execFileSync(path.join(root, 'node_modules', '.bin', 'cdk8s'),
    ['import', merged, '--output', path.join(root, 'imports'), '--language', 'typescript', '--no-check-upgrade'],
    { stdio: 'inherit', cwd: root });
} finally {
  fs.writeFileSync(cdk8sYaml, cdk8sYamlBefore);
  fs.rmSync(tmp, { recursive: true, force: true });
}
