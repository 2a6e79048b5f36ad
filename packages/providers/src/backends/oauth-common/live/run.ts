import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * `npm run test:live -- <kind> [<kind>...]`: runs the conformance suite against real accounts of
 * the named OAuth kinds (all of them when none is named), with credentials from the environment
 * (see live-conformance.ts).
 */
const kinds = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const root = join(import.meta.dirname, '../../../../../..');
// The vitest CLI as installed at the workspace root.
const vitest = join(root, 'node_modules/vitest/vitest.mjs');
const child = spawn(process.execPath, [vitest, 'run', '--config', join(root, 'vitest.live.config.ts')], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, SKYFERRY_LIVE_KINDS: kinds.join(',') },
});
child.on('exit', (code) => process.exit(code ?? 1));
