// The cluster suites (test/cluster/): the runtime, kubectl and the agent against a real
// kube-apiserver, etcd, kube-controller-manager and kube-scheduler with the fake kubelet
// (test/cluster/plane), which globalSetup starts (building the binaries once) and globalTeardown
// stops. UYUNI_CDK_PLANE=DIR uses a plane already up (`npm run --silent cluster -- up DIR`) and
// leaves it running. One worker: the plane has the machine's two cores already.
// The control plane's binaries are cached under the user's cache (.ci/control-plane/build.sh),
// named here before jest.config.js points XDG_CACHE_HOME at a folder of the test run: a build
// takes half an hour.
process.env.UYUNI_CDK_CONTROL_PLANE_CACHE ||= require('path').join(process.env.XDG_CACHE_HOME || require('path').join(require('os').homedir(), '.cache'), 'uyuni-cdk', 'control-plane');
const base = require('./jest.config.js');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/cluster'],
  testPathIgnorePatterns: [],
  globalSetup: '<rootDir>/test/cluster/global-setup.ts',
  globalTeardown: '<rootDir>/test/cluster/global-teardown.ts',
  maxWorkers: 1,
  testTimeout: 300000,
};
