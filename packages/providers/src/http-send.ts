import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { ProviderError, toProviderError } from './api/errors.ts';
import type { OutboundGuard } from './net/guard.ts';
import { chunksOf, recycle } from './recycle.ts';

export interface HttpSend {
  secure: boolean;
  /** Where to send it; without it `options` names host, port and path. */
  url?: URL;
  /** Method, headers, agent and signal (and host, port and path when there is no `url`). */
  options: RequestOptions;
  body?: string | Buffer | Readable;
  /** A stalled server must not hang a transfer forever: the request fails 'network' after this. */
  timeoutMs: number;
  /** Names the request in the timeout message. */
  what: string;
  /** Checks the server's address on every new connection (unset: any address). */
  guard?: OutboundGuard;
}

/**
 * Sends one request over node:http(s) and resolves with the response once its headers arrive,
 * whatever its status. A buffered body is sent whole, a stream is pumped (its failure ends the
 * request; each chunk goes back to its ring, see recycle.ts, once the socket has taken it; an
 * error answer before the body is all sent stops the sending and destroys the stream); an abort
 * through `options.signal` rejects 'canceled', other failures as ProviderErrors.
 */
export function sendHttp({ secure, url, options, body, timeoutMs, what, guard }: HttpSend): Promise<IncomingMessage> {
  const signal = options.signal;
  const doRequest = secure ? httpsRequest : httpRequest;
  const failure = (err: unknown) =>
    signal?.aborted ? new ProviderError('canceled', 'canceled', { cause: err }) : toProviderError(err);
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (guard) {
      // An IP literal is judged now; a name by the lookup, on each connection the agent opens.
      guard.checkHost(url ? url.hostname : (options.hostname ?? options.host ?? ''));
      options = { ...options, lookup: guard.lookup };
    }
    const r = url ? doRequest(url, options) : doRequest(options);
    r.setTimeout(timeoutMs, () => r.destroy(new ProviderError('network', `timeout: ${what}`)));
    let settled = false;
    let answered = false;
    const stream = body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body) ? body : undefined;
    // A connection gone before the whole body was sent wants no more of it.
    if (stream) r.once('close', () => r.writableFinished || stream.destroy());
    r.once('response', (res) => {
      settled = true;
      answered = true;
      if (stream && !r.writableFinished && (res.statusCode ?? 0) >= 300) {
        // Refused before the whole body was sent (a full folder, a missing permission): stop
        // sending, and drop the connection once the answer is read, as a half-sent body leaves
        // it unusable. The body's source learns of it by being destroyed.
        stream.destroy();
        const drop = () => r.writableFinished || r.destroy();
        res.once('end', drop);
        res.once('close', drop);
      }
      resolve(res);
    });
    // Kept for the request's whole life: a socket may fail again after the first error settled it.
    r.on('error', (err) => {
      if (settled) return;
      settled = true;
      reject(failure(err));
    });
    if (!stream) r.end(body);
    else {
      pump(stream, r, () => answered).catch((err: unknown) => {
        // pump destroys the request; whichever failure comes first is the answer.
        if (settled) return;
        settled = true;
        reject(failure(err));
      });
    }
  });
}

/** Waits until `r` takes more; rejects if it closes first. */
function drained(r: ClientRequest): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      r.off('drain', onDrain);
      r.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new ProviderError('network', 'connection closed while sending'));
    r.on('drain', onDrain);
    r.on('close', onClose);
  });
}

/**
 * `pipeline(body, r)` for a request, handing each chunk back to its ring (recycle.ts) once it has
 * been written to the socket, so large uploads read into the same few buffers.
 */
async function pump(body: Readable, r: ClientRequest, answered: () => boolean): Promise<void> {
  try {
    for await (const chunk of chunksOf(body)) {
      if (r.destroyed) throw new ProviderError('network', 'connection closed while sending');
      const more = r.write(chunk, (err) => {
        if (!err) recycle(chunk);
      });
      if (!more) await drained(r);
    }
    if (r.destroyed) throw new ProviderError('network', 'connection closed while sending');
    r.end();
  } catch (err) {
    body.destroy();
    // After an early answer the request goes once that answer is read (see sendHttp).
    if (!answered()) r.destroy(err as Error);
    throw err;
  }
}
