// A transfer in its own process, for the crash test: local folder to local folder, checkpoints in a
// file, every write the target is asked for logged (synchronously, before it starts) to `writesLog`.
// Prints "planned" once the plan is made and exits 0 when the run succeeded.
import { appendFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { openLocal } from '@skyferry/providers';
import type { Provider, SrcInfo, WriteOptions } from '@skyferry/providers';
import { executePlan } from '../executor.ts';
import { planTransfer } from '../planner.ts';
import { FileCheckpointStore } from '../stores.ts';

const [srcDir, dstDir, checkpointFile, writesLog] = process.argv.slice(2) as [string, string, string, string];

const source = await openLocal({ path: srcDir }, { localRoots: [srcDir] });
const real = await openLocal({ path: dstDir }, { localRoots: [dstDir] });
// The target, with its writes logged and slowed a little so the run lasts long enough to be killed.
const target: Provider = Object.create(real, {
  put: {
    value: async (path: string, body: Readable, src: SrcInfo, opts?: WriteOptions) => {
      appendFileSync(writesLog, path + '\n');
      await new Promise((r) => setTimeout(r, 2));
      return real.put(path, body, src, opts);
    },
  },
}) as Provider;

const checkpoints = new FileCheckpointStore(checkpointFile);
// "Transfer anyway": without checkpoints every file would be written again on each restart.
const plan = await planTransfer({
  source,
  target,
  mode: 'migrate',
  sourcePaths: ['/'],
  targetPath: '/',
  sameNamePolicy: 'overwrite',
});
process.stdout.write('planned\n');
const result = await executePlan(plan, { source, target, checkpoints, transfers: 8, smallFileTransfers: 32 });
await checkpoints.close();
process.stdout.write(`${result.outcome} ${result.summary.resumed} ${result.summary.added + result.summary.updated}\n`);
process.exit(result.outcome === 'success' ? 0 : 1);
