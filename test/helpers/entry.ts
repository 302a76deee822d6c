/**
 * How the tests start uyuni-cdk: from the sources, as `npm run dev` does (scripts/dev.js), so a
 * test runs the sources as they are, never an older build of them. The installed command's own
 * start (bin/uyuni-cdk.js and bin/synth.js, which run only the bundles) is tested against bundles
 * built for the purpose, in test/build/ and test/package/.
 */
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');

/** The command from the sources: `spawn(process.execPath, [UYUNI_CDK, ...args])`, as `uyuni-cdk ...args`. */
export const UYUNI_CDK = path.join(ROOT, 'scripts', 'dev.js');

/** The cdk8s app (bin/synth.js) from the sources: `spawn(process.execPath, SYNTH_APP)`. */
export const SYNTH_APP: readonly string[] = [UYUNI_CDK, '--synth-app'];
