import { fork, type ChildProcess } from 'node:child_process';

/**
 * "On this computer": the shell runs a Skyferry server of its own on loopback, with its own data
 * folder (SQLite, the in-process job queue, mail to the outbox), the operator's local folders
 * reaching the user's home, and nothing configured from the environment the app was started in.
 */
export interface EmbeddedServerOptions {
  /** The Node to run it with: Electron's own binary (as Node) in the app, node in tests. */
  execPath: string;
  /** The server's entry point (apps/server/src/main.ts, or the staged copy in an installed app). */
  entry: string;
  dataDir: string;
  /** The port to listen on; 0 picks a free one. */
  port: number;
  /** SKYFERRY_LOCAL_ROOTS: the folders the local-folder kind may use (the user's home). */
  localRoots: string;
  /** The master secret, kept by the shell (wrapped with safeStorage); unset: the server keeps its own. */
  secret?: string;
  webDist?: string;
  /** Runs Electron's binary as plain Node. */
  runAsNode: boolean;
  /** Each line the server prints (its log). */
  onLog?: (line: string) => void;
  /** Called when the server exits without being asked to stop. */
  onUnexpectedExit?: (code: number | null, signal: string | null) => void;
  startTimeoutMs?: number;
  stopTimeoutMs?: number;
  /** The rest of the environment (the shell's own, less what would reconfigure the server). */
  baseEnv?: NodeJS.ProcessEnv;
}

export interface EmbeddedServer {
  url: string;
  pid: number;
  /** Asks the server to stop, waits for it (killing it after stopTimeoutMs); resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Variables of the shell's environment that must not reach the embedded server. */
const SERVER_VARIABLES =
  /^(PORT|HOST|PUBLIC_URL|DATABASE_URL|REDIS_URL|SKYFERRY_.*|BILLING_MODE|SMTP_URL|NODE_OPTIONS)$/;

export function embeddedServerEnv(options: EmbeddedServerOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(options.baseEnv ?? process.env)) {
    if (!SERVER_VARIABLES.test(key)) env[key] = value;
  }
  Object.assign(env, {
    HOST: '127.0.0.1',
    PORT: String(options.port),
    SKYFERRY_DATA_DIR: options.dataDir,
    SKYFERRY_LOCAL_ROOTS: options.localRoots,
    SKYFERRY_WORKERS: '1',
    BILLING_MODE: 'off',
    LOG_LEVEL: 'info',
  });
  if (options.secret) env.SKYFERRY_SECRET = options.secret;
  if (options.webDist) env.SKYFERRY_WEB_DIST = options.webDist;
  if (options.runAsNode) env.ELECTRON_RUN_AS_NODE = '1';
  else delete env.ELECTRON_RUN_AS_NODE;
  return env;
}

/** Polls `${url}/healthz` until it answers ok. */
export async function waitForHealthy(url: string, timeoutMs: number, isAlive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!isAlive()) throw new Error('the server exited while starting');
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      const body = (await res.json()) as { code?: number; data?: { status?: string } };
      if (res.ok && body.code === 0 && body.data?.status === 'ok') return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`the server did not become healthy within ${timeoutMs} ms (${last})`);
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Starts the embedded server and resolves once `/healthz` answers ok. */
export async function startEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  const child = fork(options.entry, [], {
    execPath: options.execPath,
    env: embeddedServerEnv(options),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // Node's own flags of the shell (a test runner's loaders) are not the server's.
    execArgv: [],
  });
  let stopping = false;
  let output = '';
  const forward = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-8_000);
    for (const line of text.split('\n')) if (line.trim()) options.onLog?.(line);
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  const alive = () => child.exitCode === null && child.signalCode === null;
  child.once('exit', (code, signal) => {
    if (!stopping) options.onUnexpectedExit?.(code, signal);
  });

  const stop = async (): Promise<number | null> => {
    stopping = true;
    if (!alive()) return child.exitCode;
    const exited = exitOf(child);
    // The server stops cleanly on this message (closing the database and the queue); signals
    // would not reach it that way on Windows.
    if (child.connected) child.send({ type: 'shutdown' });
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };

  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the server did not start within ${startTimeoutMs} ms`)),
        startTimeoutMs,
      );
      child.on('message', (msg: { type?: string; url?: string }) => {
        if (msg?.type === 'listening' && typeof msg.url === 'string') {
          clearTimeout(timer);
          resolve(msg.url);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with code ${code}: ${output.trim().split('\n').slice(-5).join('\n')}`));
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    await waitForHealthy(url, startTimeoutMs, alive);
    return { url, pid: child.pid ?? 0, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
