import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, startDaemon, waitFor } from './process.ts';

export interface S3rverServer {
  /** http://127.0.0.1:PORT (path-style addressing). */
  readonly endpoint: string;
  readonly port: number;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Buckets created at start. */
  readonly buckets: readonly string[];
  /** Where s3rver keeps its data. */
  readonly directory: string;
  stop(): Promise<void>;
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Starts the npm `s3rver` S3 server on 127.0.0.1 in a child process (it needs
 * NODE_OPTIONS=--openssl-legacy-provider for its continuation tokens) over a temporary folder,
 * with the given buckets created. Credentials are s3rver's fixed S3RVER / S3RVER.
 */
export async function startS3rver(opts: { buckets?: string[] } = {}): Promise<S3rverServer> {
  const buckets = opts.buckets ?? ['skyferry-test'];
  const require = createRequire(import.meta.url);
  const bin = join(dirname(require.resolve('s3rver/package.json')), 'bin', 's3rver.js');
  const directory = mkdtempSync(join(tmpdir(), 'skyferry-s3rver-'));
  const port = await freePort();
  const args = [bin, '-d', directory, '-a', '127.0.0.1', '-p', String(port), '--silent', '--no-vhost-buckets'];
  for (const b of buckets) args.push('--configure-bucket', b);
  // Not the test runner's own NODE_OPTIONS: s3rver is plain CommonJS.
  const daemon = startDaemon(process.execPath, args, { env: { NODE_OPTIONS: '--openssl-legacy-provider' } });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => {
      if (daemon.child.exitCode !== null) throw new Error(`s3rver exited: ${daemon.output()}`);
      // An anonymous request is refused, which is enough to know it answers.
      return (await httpStatus(endpoint + '/')) > 0;
    }, 's3rver to answer');
  } catch (err) {
    await daemon.stop();
    rmSync(directory, { recursive: true, force: true });
    throw err;
  }
  return {
    endpoint,
    port,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    buckets,
    directory,
    async stop() {
      await daemon.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
