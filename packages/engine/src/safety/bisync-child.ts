// A two-way sync between two local folders in its own process, for the kill test: state and
// checkpoints in files, deletions slowed and announced ("deleting <path>" on stdout, before each)
// so the parent can kill the process while it deletes. Writes its plan to `planFile` before it
// runs, and prints "<outcome>" at the end.
import { writeFileSync } from 'node:fs';
import type { Provider } from '@skyferry/providers';
import { openLocal } from '@skyferry/providers';
import { executePlan } from '../executor.ts';
import { planTransfer } from '../planner.ts';
import { FileCheckpointStore, FileTwoWayStateStore } from '../stores.ts';

const [aDir, bDir, stateFile, checkpointFile, planFile] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];

const source = await openLocal({ path: aDir }, { localRoots: [aDir] });
const real = await openLocal({ path: bDir }, { localRoots: [bDir] });
const slow = (fn: (path: string) => Promise<void>) => async (path: string) => {
  process.stdout.write(`deleting ${path}\n`);
  await new Promise((r) => setTimeout(r, 30));
  return fn(path);
};
const target: Provider = Object.create(real, {
  remove: { value: slow((p) => real.remove(p)) },
  rmdir: { value: slow((p) => real.rmdir(p)) },
}) as Provider;

const twoWayState = new FileTwoWayStateStore(stateFile);
const checkpoints = new FileCheckpointStore(checkpointFile);
const plan = await planTransfer({ source, target, mode: 'two_way', sourcePaths: ['/'], targetPath: '/', twoWayState });
writeFileSync(planFile, JSON.stringify(plan));
const result = await executePlan(plan, {
  source,
  target,
  twoWayState,
  checkpoints,
  confirmDeletes: true,
  useTrash: false,
  transfers: 2,
});
await checkpoints.close();
process.stdout.write(`${result.outcome}\n`);
process.exit(result.outcome === 'success' ? 0 : 1);
