import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Marks a call one API process passed on to another: it is answered there, never passed on again. */
export const PASSED_ON_HEADER = 'x-skyferry-passed-on';

/** What goes with the call: who is calling (the receiving process checks it again), in which language, the body's shape. */
const KEPT_HEADERS = ['authorization', 'cookie', 'accept-language', 'host', 'user-agent', 'x-request-id'] as const;
const BODY_HEADERS = ['content-type', 'content-length'] as const;

/** Longest a process waits for the one holding the session to connect, and to say anything once connected. */
const CONNECT_TIMEOUT_MS = 5_000;
const IDLE_TIMEOUT_MS = 10 * 60_000;

/**
 * Passes a call on to the API process at `base` (which holds what it names) and answers with that
 * process's answer. `body` is the raw request stream for a call that carries one. Rejects when that
 * process cannot be reached or stops answering midway.
 */
export async function passOn(
  base: string,
  request: FastifyRequest,
  reply: FastifyReply,
  body?: IncomingMessage,
): Promise<void> {
  const url = new URL(request.url, `${base}/`);
  const headers: Record<string, string> = { [PASSED_ON_HEADER]: '1' };
  for (const name of [...KEPT_HEADERS, ...(body ? BODY_HEADERS : [])]) {
    const v = request.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  if (!headers['x-request-id']) headers['x-request-id'] = String(request.id);
  const answer = await new Promise<{ status: number; type: string | undefined; data: Buffer }>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: request.method, headers });
    const connectTimer = setTimeout(
      () => req.destroy(new Error('the holding process did not answer')),
      CONNECT_TIMEOUT_MS,
    );
    req.on('socket', (socket) => {
      socket.once('connect', () => clearTimeout(connectTimer));
      if (!socket.connecting) clearTimeout(connectTimer);
    });
    req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(new Error('the holding process stopped answering')));
    req.on('error', (err) => {
      clearTimeout(connectTimer);
      body?.unpipe(req);
      body?.resume();
      reject(err);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const type = res.headers['content-type'];
        resolve({ status: res.statusCode ?? 502, type, data: Buffer.concat(chunks) });
      });
    });
    if (body) body.pipe(req);
    else req.end();
  });
  reply.code(answer.status);
  if (answer.type) reply.type(answer.type);
  await reply.send(answer.data);
}
