/** What a command line run writes to and reads from, and the exit codes it answers. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Where `field=-` of `remotes add` reads a value from. */
  stdin?: NodeJS.ReadableStream;
  signal?: AbortSignal;
}

/**
 * Exit codes: done; some files failed or the run stopped; a usage mistake; done, but symbolic
 * links were left alone (each reported); canceled (as after SIGINT).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, linksLeft: 3, canceled: 130 } as const;
