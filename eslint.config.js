// `npm run lint` (and test/lint.test.ts): typescript-eslint's recommended rules, no import
// cycles, no function in src/ over 80 lines, and the layering of docs/architecture (README
// "Layout"): what may import what.
// import-x/no-cycle skips type-only imports (`import type`, `import { type X }`) by design
// (eslint-plugin-import-x 4.18.1 lib/rules/no-cycle.js:69-76), so it sees cycles of values
// only: the promise "no import cycles" with type imports counted is kept by
// test/architecture/cycles.test.ts (`npm test`), which reads every import of src/ with the
// TypeScript parser. The rooms inside src/runtime (core, safety, decide, apply, report, verbs: each
// imports only lower ranks) are checked the same way, type imports counted, by
// test/architecture/rooms.test.ts.
const tseslint = require('typescript-eslint');
const importX = require('eslint-plugin-import-x');

/** A layer rule: files under `dir` must not import from these sibling directories of src/. */
const layer = (dir, forbidden, why) => ({
  files: [`src/${dir}/**/*.ts`],
  rules: {
    'no-restricted-imports': ['error', {
      patterns: forbidden.map((f) => ({ group: [`../${f}`, `../${f}/*`, `../../src/${f}/*`], message: `${dir} must not import ${f}: ${why}` })),
    }],
  },
});

module.exports = tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'imports/**', '.cdk8s.out/**', 'coverage/**', 'bundle/**', 'lib/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    files: ['**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly', console: 'readonly' } },
  },
  {
    // bin/code-cache.js runs the bundles as vm.Script, which has no dynamic-import callback: an
    // import() that esbuild leaves in a bundle (a builtin, anything not bundled, a computed name)
    // throws ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING when reached (the confirmation on a terminal
    // did). Relative modules are bundled (esbuild turns their import() into a require()); a
    // builtin or a package is required. scripts/build.js checks the bundles too.
    files: ['src/**/*.ts', 'bin/**/*.js'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "ImportExpression:not([source.type='Literal'][source.value=/^\\.\\.?\\//])",
        message: 'no import() of a builtin, a package or a computed name in shipped code: the bundles run as vm.Script, which cannot import(); use a static import or require()',
      }],
    },
  },
  {
    // Issue 34: a function a reader cannot take in at once is split into named functions with one
    // job each. 80 lines, comments and blank lines counted (nested functions count within their
    // outer one as well).
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  layer('constructs', ['config', 'plans', 'runtime', 'agent', 'cli'], 'constructs take narrow props; src/plans maps the configuration onto them'),
  layer('model', ['config', 'plans', 'constructs', 'runtime', 'agent', 'cli'], 'the data tables depend on nothing but the plan contract'),
  layer('plan', ['config', 'plans', 'constructs', 'model', 'runtime', 'agent', 'cli', 'systemd'], 'the plan contract stands alone: synth and runtime both read it'),
  layer('runtime', ['plans', 'constructs', 'config', 'agent', 'cli'], 'the runtime reads plan.json, never the synth side'),
  layer('systemd', ['agent', 'runtime', 'cli', 'plans', 'config'], 'the renderer is pure and shared by synth and the agent'),
  layer('agent', ['plans', 'constructs', 'config', 'runtime', 'cli'], 'the agent depends on systemd/ and the Kubernetes layer (src/kube) only'),
  layer('kube', ['runtime', 'agent', 'cli', 'plans', 'constructs', 'config', 'model', 'systemd'], 'the Kubernetes layer lies under both the runtime and the agent'),
  layer('config', ['plans', 'constructs', 'runtime', 'agent', 'cli'], 'reading input comes first'),
  layer('plans', ['runtime', 'agent', 'cli'], 'synth never loads the runtime'),
);
