#!/usr/bin/env sh
# Regenerates the committed dist/ from uyuni.yaml and every examples/*.yaml (what the freshness
# test in test/synth-cli.test.ts compares against). `npm run synth:all`.
set -eu
cd "$(dirname "$0")/.."
# bin/synth.js runs the synth bundle: built first from the sources as they are.
node scripts/build.js
node bin/synth.js
for config in examples/*.yaml; do
  UYUNI_CONFIG=$config node bin/synth.js
done
