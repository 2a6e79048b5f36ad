// A transfer in its own process, for the crash tests: a local folder to a local folder (or, given
// its URL, user and password, a WebDAV server), checkpoints in a file, every write the target is
// asked for logged (synchronously, before it starts) to `writesLog`. With SKYFERRY_TEST_STREAM=1 it
// plans and executes folder by folder (`streamTransfer`). `readDelayMs` slows each
// chunk read from the source, so that a kill finds writes under way. Prints "planned" once the
// plan is made and exits 0 when the run succeeded.
import { appendFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { openLocal, openWebdav } from '@skyferry/providers';
import type { Provider, SrcInfo, WriteOptions } from '@skyferry/providers';
import { executePlan } from '../executor.ts';
import { planTransfer } from '../planner.ts';
import { streamTransfer } from '../run.ts';
import { FileCheckpointStore } from '../stores.ts';
import type { TransferResult } from '../types.ts';
import { slowReads } from './backends.ts';

const [srcDir, dstDir, checkpointFile, writesLog, davUrl, davUser, davPass, readDelay] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
  string | undefined,
  string | undefined,
  string | undefined,
];
const readDelayMs = Number(readDelay ?? 0);

const realSource = await openLocal({ path: srcDir }, { localRoots: [srcDir] });
const source: Provider = readDelayMs > 0 ? slowReads(realSource, readDelayMs) : realSource;
const real: Provider = davUrl
  ? await openWebdav({ url: davUrl, username: davUser, password: davPass })
  : await openLocal({ path: dstDir }, { localRoots: [dstDir] });
// The target, with its writes logged and slowed (10 ms each) so the run lasts long enough to be killed
// on a fast machine too.
const target: Provider = Object.create(real, {
  put: {
    value: async (path: string, body: Readable, src: SrcInfo, opts?: WriteOptions) => {
      appendFileSync(writesLog, path + '\n');
      await new Promise((r) => setTimeout(r, 10));
      return real.put(path, body, src, opts);
    },
  },
  // Small files written whole from memory are writes too.
  ...(real.putSmall
    ? {
        putSmall: {
          value: async (path: string, data: Buffer, src: SrcInfo, opts?: WriteOptions) => {
            appendFileSync(writesLog, path + '\n');
            await new Promise((r) => setTimeout(r, 10));
            return (real.putSmall as NonNullable<Provider['putSmall']>).call(real, path, data, src, opts);
          },
        },
      }
    : {}),
}) as Provider;

const checkpoints = new FileCheckpointStore(checkpointFile);
// "Transfer anyway": without checkpoints every file would be written again on each restart.
const req = {
  source,
  target,
  mode: 'migrate' as const,
  sourcePaths: ['/'],
  targetPath: '/',
  sameNamePolicy: 'overwrite' as const,
};
let result: TransferResult;
if (process.env.SKYFERRY_TEST_STREAM === '1') {
  // Planned and executed folder by folder: "planned" once the roots are known.
  ({ result } = await streamTransfer({
    ...req,
    checkpoints,
    transfers: 8,
    smallFileTransfers: 32,
    window: 256,
    beforeWrites: async () => void process.stdout.write('planned\n'),
  }));
} else {
  const plan = await planTransfer(req);
  process.stdout.write('planned\n');
  result = await executePlan(plan, { source, target, checkpoints, transfers: 8, smallFileTransfers: 32 });
}
await checkpoints.close();
process.stdout.write(`${result.outcome} ${result.summary.resumed} ${result.summary.added + result.summary.updated}\n`);
process.exit(result.outcome === 'success' ? 0 : 1);
