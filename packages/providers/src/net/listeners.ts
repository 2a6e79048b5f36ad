import type { EventEmitter } from 'node:events';
import type { Agent } from 'node:http';

const ignore = (): void => undefined;

/**
 * Keeps an 'error' listener on a socket, stream or client for the rest of its life. An 'error'
 * event with no listener ends the whole process; libraries emit late ones (ssh2 reports a lost
 * connection after its own handshake timeout, a socket fails after its request settled). Whoever
 * cares about the error listens too and still gets it; an error nobody asked about is dropped.
 */
export function keepErrorListener<T extends EventEmitter>(emitter: T): T {
  emitter.on('error', ignore);
  return emitter;
}

/** Every socket `agent` opens keeps an error listener for its whole life, busy or idle. */
export function keepSocketErrorListeners<A extends Agent>(agent: A): A {
  const make = agent.createConnection.bind(agent);
  agent.createConnection = (options, callback) => {
    const socket = make(options, callback);
    if (socket) keepErrorListener(socket);
    return socket;
  };
  return agent;
}
