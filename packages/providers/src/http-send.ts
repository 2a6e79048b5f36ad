import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ProviderError, toProviderError } from './api/errors.ts';

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
}

/**
 * Sends one request over node:http(s) and resolves with the response once its headers arrive,
 * whatever its status. A buffered body is sent whole, a stream is piped (its failure ends the
 * request); an abort through `options.signal` rejects 'canceled', other failures as ProviderErrors.
 */
export function sendHttp({ secure, url, options, body, timeoutMs, what }: HttpSend): Promise<IncomingMessage> {
  const signal = options.signal;
  const doRequest = secure ? httpsRequest : httpRequest;
  const failure = (err: unknown) =>
    signal?.aborted ? new ProviderError('canceled', 'canceled', { cause: err }) : toProviderError(err);
  return new Promise<IncomingMessage>((resolve, reject) => {
    const r = url ? doRequest(url, options) : doRequest(options);
    r.setTimeout(timeoutMs, () => r.destroy(new ProviderError('network', `timeout: ${what}`)));
    let settled = false;
    r.once('response', (res) => {
      settled = true;
      resolve(res);
    });
    r.once('error', (err) => {
      if (settled) return;
      settled = true;
      reject(failure(err));
    });
    if (body === undefined) r.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) r.end(body);
    else {
      pipeline(body, r).catch((err: unknown) => {
        // pipeline destroys the request; whichever failure comes first is the answer.
        if (settled) return;
        settled = true;
        reject(failure(err));
      });
    }
  });
}
