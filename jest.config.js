// @kubernetes/client-node 1.x and its auth dependencies are ESM-only: swc transpiles them
// to CommonJS for jest, together with our own TypeScript.
const esm = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose'];
// kubectl's discovery cache (src/kube/discovery-cache.ts) of the simulators' short-lived
// servers goes into a directory of the test run, not the home directory.
process.env.KUBECACHEDIR ||= require('fs').mkdtempSync(require('path').join(require('os').tmpdir(), 'uyuni-cdk-test-kubecache-'));
// So does the compiled code of the bundles (bin/code-cache.js), under $XDG_CACHE_HOME/uyuni-cdk.
process.env.XDG_CACHE_HOME ||= require('fs').mkdtempSync(require('path').join(require('os').tmpdir(), 'uyuni-cdk-test-cache-'));
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The cluster suites need the real control plane: their own project (jest.cluster.config.js,
  // `npm run test:cluster`), run by .ci/run after this one.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/'],
  transform: {
    '^.+\\.(t|j|mj)s$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esm.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 60000,
};
