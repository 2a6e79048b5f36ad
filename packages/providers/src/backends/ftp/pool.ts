import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Client, FTPError, type FTPContext, type FTPResponse } from 'basic-ftp';
import { connectForPassiveTransfer, parseEpsvResponse, parsePasvResponse } from 'basic-ftp/dist/transfer.js';
import { ProviderError, canceled, toProviderError } from '../../api/errors.ts';
import type { OutboundGuard } from '../../net/guard.ts';
import { keepErrorListener } from '../../net/listeners.ts';
import type { Pacer } from '../../pacer.ts';

export interface FtpLogin {
  host: string;
  port: number;
  username: string;
  password: string;
  /** Explicit FTPS (AUTH TLS) for control and data connections. */
  secure: boolean;
  /** SHA-256 fingerprint the server's certificate must have (pins a self-signed certificate). */
  tlsFingerprint?: string;
  /** Accept any certificate (unsafe; documented as such). */
  insecureSkipVerify?: boolean;
  timeoutMs?: number;
  /** Checks the server's address on every connection (unset: any address). */
  guard?: OutboundGuard;
}

/** Normalises "AB:CD:..." or "abcd..." to upper-case hex without separators. */
export function normalizeFingerprint(fp: string): string {
  return fp
    .replace(/^sha256:/i, '')
    .replace(/[^0-9a-f]/gi, '')
    .toUpperCase();
}

/** Maps basic-ftp and socket errors to ProviderErrors. */
export function ftpError(err: unknown, path: string): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof FTPError) {
    const code = err.code;
    const text = err.message;
    const opts = { cause: err, serviceCode: code };
    if (code === 530) return new ProviderError('auth_invalid', `FTP login refused: ${text}`, opts);
    if (code === 421) return new ProviderError('rate_limited', `FTP server busy: ${text}`, opts);
    if (code === 452 || code === 552) return new ProviderError('quota', `${text}: ${path}`, opts);
    if (code === 550 || code === 450) {
      if (/permission|denied|not allowed|access/i.test(text))
        return new ProviderError('permission', `${text}: ${path}`, opts);
      if (/exist/i.test(text) && !/not exist|no such|doesn't exist|does not exist/i.test(text)) {
        return new ProviderError('exists', `${text}: ${path}`, opts);
      }
      return new ProviderError('not_found', `not found: ${path} (${text})`, opts);
    }
    if (code === 553) return new ProviderError('permission', `${text}: ${path}`, opts);
    if (code === 451 || code === 426 || code === 425) return new ProviderError('network', `${text}: ${path}`, opts);
    if (code === 500 || code === 501 || code === 502 || code === 504) {
      return new ProviderError('not_supported', `${text}: ${path}`, opts);
    }
    return new ProviderError(code >= 500 ? 'unknown' : 'server', `${text}: ${path}`, opts);
  }
  const e = err as { message?: string; code?: string } | undefined;
  if (/client is closed|socket closed|timeout/i.test(e?.message ?? '')) {
    return new ProviderError('network', `${e?.message}: ${path}`, { cause: err });
  }
  return toProviderError(err);
}

/**
 * Passive mode whose data connections all go to the address of the control connection (the one
 * the guard checked), on the port EPSV or PASV names: the address in a PASV answer is ignored, as
 * curl does, so a server cannot send Skyferry to another host (its own LAN, say). EPSV first;
 * a server that refuses it gets PASV from then on.
 */
function passiveAtControlAddress(guard: OutboundGuard | undefined): (ftp: FTPContext) => Promise<FTPResponse> {
  let epsv = true;
  return async (ftp) => {
    const control = ftp.socket.remoteAddress;
    if (control === undefined) throw new Error('the control connection is closed');
    const host = control.replace(/^::ffff:/i, '');
    guard?.checkHost(host);
    let res: FTPResponse | undefined;
    let port: number | undefined;
    if (epsv) {
      try {
        res = await ftp.request('EPSV');
        port = parseEpsvResponse(res.message);
      } catch (err) {
        if (ftp.closed) throw err;
        epsv = false;
      }
    }
    if (port === undefined) {
      res = await ftp.request('PASV');
      port = parsePasvResponse(res.message).port;
    }
    await connectForPassiveTransfer(host, port, ftp);
    return res as FTPResponse;
  };
}

/** Every socket the client opens (control and data) keeps an error listener for its whole life. */
function listenForLife(client: Client): void {
  const ctx = client.ftp as unknown as { _newSocket: () => Socket };
  const make = ctx._newSocket.bind(ctx);
  ctx._newSocket = () => keepErrorListener(make());
}

/** Connects and logs in, checking a pinned certificate before the password is sent. */
export async function connectFtp(login: FtpLogin): Promise<{ client: Client; welcome: string }> {
  const client = new Client(login.timeoutMs ?? 30_000);
  listenForLife(client);
  client.prepareTransfer = passiveAtControlAddress(login.guard);
  try {
    // The control connection goes to the address the guard checked; data connections follow it.
    const address = login.guard ? (await login.guard.resolve(login.host)).address : login.host;
    const hello = await client.connect(address, login.port);
    if (login.secure) {
      const pinned = login.tlsFingerprint ? normalizeFingerprint(login.tlsFingerprint) : undefined;
      await client.useTLS({
        host: login.host,
        servername: /^[\d.]+$|:/.test(login.host) ? undefined : login.host,
        // A pinned or explicitly trusted certificate replaces CA verification; it is checked below.
        rejectUnauthorized: !(pinned || login.insecureSkipVerify),
      });
      if (pinned) {
        const socket = client.ftp.socket as TLSSocket;
        const got = normalizeFingerprint(socket.getPeerCertificate().fingerprint256 ?? '');
        if (got !== pinned) {
          client.close();
          throw new ProviderError(
            'host_key_changed',
            `The FTPS server's certificate (SHA-256 ${got}) does not match the pinned fingerprint; refusing to send the password.`,
          );
        }
      }
    }
    await client.login(login.username, login.password);
    await client.useDefaultSettings();
    return { client, welcome: hello.message };
  } catch (err) {
    client.close();
    if (err instanceof ProviderError) throw err;
    const pe = ftpError(err, '/');
    if (pe.code !== 'auth_invalid' && pe.code !== 'rate_limited' && pe.code !== 'network') {
      throw new ProviderError('network', `FTP connect failed: ${(err as Error).message}`, { cause: err });
    }
    throw pe;
  }
}

/**
 * A few logged-in FTP clients: a basic-ftp client does one thing at a time, so each operation
 * borrows one for its duration and waits when all `max` are busy.
 */
export class FtpPool {
  private readonly idle: Client[] = [];
  private readonly waiters: Array<(c: Client | undefined) => void> = [];
  private count = 0;
  private closed = false;
  private readonly login: FtpLogin;
  private readonly max: number;

  private readonly pacer: Pacer | undefined;

  constructor(login: FtpLogin, max: number, first?: Client, pacer?: Pacer) {
    this.login = login;
    this.max = max;
    this.pacer = pacer;
    if (first) {
      this.idle.push(first);
      this.count = 1;
    }
  }

  /** Borrows a client (paced by the account's rate limit); give it back with `release`. */
  async acquire(signal?: AbortSignal): Promise<Client> {
    await this.pacer?.acquire();
    return this.borrow(signal);
  }

  /** A free client, a new one while fewer than `max` are open, else the next one given back; a cancel stops the wait. */
  private async borrow(signal?: AbortSignal): Promise<Client> {
    for (;;) {
      if (this.closed) throw new ProviderError('canceled', 'connection pool closed');
      if (signal?.aborted) throw canceled();
      const c = this.idle.pop();
      if (c) {
        if (!c.closed) return c;
        this.count -= 1;
        continue;
      }
      if (this.count < this.max) {
        this.count += 1;
        try {
          return (await connectFtp(this.login)).client;
        } catch (err) {
          this.count -= 1;
          this.wakeOne();
          throw err;
        }
      }
      const got = await new Promise<Client | undefined>((resolve) => {
        const waiter = (c: Client | undefined) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(c);
        };
        // Canceled while waiting: out of the queue (the loop then throws).
        const onAbort = () => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          resolve(undefined);
        };
        this.waiters.push(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      if (got) {
        if (signal?.aborted) {
          this.release(got);
          throw canceled();
        }
        return got;
      }
    }
  }

  private wakeOne(): void {
    this.waiters.shift()?.(undefined);
  }

  /** Returns a client; a closed one (or one left mid-transfer: `discard`) is dropped. */
  release(c: Client, discard = false): void {
    if (discard || c.closed || this.closed) {
      if (!c.closed) c.close();
      this.count -= 1;
      this.wakeOne();
      return;
    }
    const w = this.waiters.shift();
    if (w) w(c);
    else this.idle.push(c);
  }

  /**
   * Runs `fn` with a borrowed client; through the account's pacer, so a dropped connection or a
   * busy server (421) is retried on a fresh client after a backoff. The error thrown at the end is
   * the original one, for the caller to map with its path.
   */
  async use<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    const pacer = this.pacer;
    if (!pacer) return this.useOnce(fn);
    let last: unknown;
    try {
      return await pacer.call(() =>
        this.useOnce(fn, true).catch((err: unknown) => {
          last = err;
          throw err;
        }),
      );
    } catch (err) {
      throw last ?? err;
    }
  }

  /**
   * Runs `fn` once with a borrowed client, not retried (uploads: their body cannot be replayed). A
   * cancel (`signal`) while waiting for a client ends the wait; `fn` is then not run.
   */
  async useOnce<T>(fn: (c: Client) => Promise<T>, paced = false, signal?: AbortSignal): Promise<T> {
    // Through `use`, the pacer already took this call's turn.
    const c = paced ? await this.borrow(signal) : await this.acquire(signal);
    let broken = false;
    try {
      return await fn(c);
    } catch (err) {
      // A failed transfer can leave the control connection out of step: start afresh.
      if (err instanceof FTPError) broken = err.code === 426 || err.code === 425 || err.code === 421;
      else if (err instanceof ProviderError) broken = ['canceled', 'network', 'unknown'].includes(err.code);
      else broken = true;
      throw err;
    } finally {
      this.release(c, broken);
    }
  }

  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) c.close();
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}
