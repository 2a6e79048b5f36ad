import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError } from './api/errors.ts';
import { sendHttp } from './http-send.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/** A node:http server on loopback; resolves with its port and a promise of its first connection's close. */
async function serve(
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ port: number; connectionClosed: Promise<void> }> {
  let closed!: () => void;
  const connectionClosed = new Promise<void>((r) => (closed = r));
  server = createServer(onRequest);
  server.once('connection', (s: Socket) => s.once('close', closed));
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, connectionClosed };
}

/** A body that has sent `first` and waits for more (a slow source). */
function slowBody(first: string): Readable {
  const body = new Readable({ read() {} });
  body.push(first);
  return body;
}

/** PUTs `body` to /f of the loopback server, announcing `length` bytes. */
const put = (port: number, length: number, body: Readable, agent?: Agent) =>
  sendHttp({
    secure: false,
    options: { host: '127.0.0.1', port, path: '/f', method: 'PUT', agent, headers: { 'content-length': length } },
    body,
    timeoutMs: 60_000,
    what: 'PUT /f',
  });

const closedWithin = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), ms))]);

describe('sendHttp with a streamed body', () => {
  it('a refusal answered before the body is all sent stops the sending: the body is destroyed and the connection dropped once the answer is read', async () => {
    // The server answers at once, keeps the connection, and would wait for the body's remaining bytes.
    const { port, connectionClosed } = await serve((_req, res) => {
      res.writeHead(403, { 'content-type': 'text/plain', connection: 'keep-alive' });
      res.end('no writing here');
    });
    const body = slowBody('first bytes');
    const res = await put(port, 1000, body);
    expect(res.statusCode).toBe(403);
    let text = '';
    for await (const c of res) text += String(c);
    expect(text).toBe('no writing here');
    expect(body.destroyed).toBe(true);
    expect(await closedWithin(connectionClosed, 5000)).toBe('closed');
  });

  it('a connection dropped while the body is sent rejects as a network failure and destroys the body', async () => {
    const { port } = await serve((req) => {
      req.once('data', () => req.socket.destroy());
    });
    const body = slowBody('x'.repeat(1000));
    const err = await put(port, 100_000, body).catch((e: unknown) => e);
    expect(ProviderError.is(err, 'network')).toBe(true);
    expect(await closedWithin(new Promise((r) => (body.destroyed ? r(0) : body.once('close', r))), 5000)).toBe(
      'closed',
    );
  });

  it('a body sent whole gets its answer and the connection is kept for the next request', async () => {
    const sockets = new Set<Socket>();
    const { port } = await serve((req, res) => {
      sockets.add(req.socket);
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => res.end(String(n)));
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 2; i++) {
      const res = await put(port, 6, Readable.from([Buffer.from('abc'), Buffer.from('def')]), agent);
      let text = '';
      for await (const c of res) text += String(c);
      expect(text).toBe('6');
    }
    expect(sockets.size).toBe(1);
    agent.destroy();
  });
});
