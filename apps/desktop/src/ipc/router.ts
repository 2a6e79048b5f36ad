import { CHANNEL_ARGS, CHANNEL_AUDIENCE, type Channel, type ChannelArgs } from './channels.ts';

/** The frame a call came from, as Electron's `event.senderFrame` describes it. */
export interface SenderFrame {
  url: string;
  /** The parent frame; null for the window's top frame. */
  parent: unknown;
}

/** The part of Electron's ipcMain the router uses. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame: SenderFrame | null }, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

export type HandlerMap = { [C in Channel]: (...args: ChannelArgs<C>) => unknown };

export class IpcRefusedError extends Error {
  readonly reason: 'channel' | 'frame' | 'origin' | 'args';
  constructor(reason: IpcRefusedError['reason'], message: string) {
    super(message);
    this.name = 'IpcRefusedError';
    this.reason = reason;
  }
}

/**
 * Scheme and host of an address: its origin, also for a custom scheme (the shell's start page),
 * whose WHATWG origin is opaque. Null when it is not an address.
 */
export function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.origin !== 'null') return u.origin;
    return u.host ? `${u.protocol}//${u.host}` : null;
  } catch {
    return null;
  }
}

export interface RouterOptions {
  /** The origin of the server whose web app the window shows now (null while none is shown). */
  appOrigin: () => string | null;
  /** The origin of the shell's own start page. */
  startOrigin: string;
  /** Told about every refused call (the log). */
  onRefused?: (channel: string, reason: string) => void;
}

/**
 * Routes the bridge's calls to their handlers: only known channels, only from the window's top
 * frame, only from the page the channel is meant for (checked by the sending frame's origin), and
 * only with arguments its schema accepts.
 */
export class IpcRouter {
  private handlers: Partial<HandlerMap> = {};
  private readonly options: RouterOptions;

  constructor(options: RouterOptions) {
    this.options = options;
  }

  register(handlers: HandlerMap): void {
    this.handlers = handlers;
  }

  private refuse(channel: string, reason: IpcRefusedError['reason'], message: string): never {
    this.options.onRefused?.(channel, `${reason}: ${message}`);
    throw new IpcRefusedError(reason, message);
  }

  /** Checks a call and runs its handler; throws IpcRefusedError when it may not run. */
  async dispatch(channel: string, frame: SenderFrame | null, args: unknown[]): Promise<unknown> {
    if (!Object.hasOwn(CHANNEL_ARGS, channel)) this.refuse(channel, 'channel', 'unknown channel');
    const known = channel as Channel;
    if (!frame || frame.parent) this.refuse(channel, 'frame', 'only the top frame may call');
    const origin = originOf(frame.url);
    const appOrigin = this.options.appOrigin();
    const audience = CHANNEL_AUDIENCE[known];
    const fromApp = origin !== null && origin === appOrigin;
    const fromStart = origin !== null && origin === this.options.startOrigin;
    const allowed =
      (fromApp && (audience === 'app' || audience === 'both')) ||
      (fromStart && (audience === 'start' || audience === 'both'));
    if (!allowed) this.refuse(channel, 'origin', `not allowed from ${origin ?? 'an unknown page'}`);
    const parsed = CHANNEL_ARGS[known].safeParse(args);
    if (!parsed.success) this.refuse(channel, 'args', parsed.error.issues[0]?.message ?? 'invalid arguments');
    const handler = this.handlers[known] as ((...a: unknown[]) => unknown) | undefined;
    if (!handler) this.refuse(channel, 'channel', 'no handler');
    return handler(...(parsed.data as unknown[]));
  }

  /** Registers every channel with Electron's ipcMain; returns a function that removes them. */
  attach(ipcMain: IpcMainLike): () => void {
    const channels = Object.keys(CHANNEL_ARGS);
    for (const channel of channels) {
      ipcMain.handle(channel, (event, ...args) => this.dispatch(channel, event.senderFrame, args));
    }
    return () => {
      for (const channel of channels) ipcMain.removeHandler(channel);
    };
  }
}
