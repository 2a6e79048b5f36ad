import type { OutboundGuard } from '../net/guard.ts';
import type { Provider } from './types.ts';

/** What a backend may need from its host beyond the cloud's own credentials. */
export interface ProviderContext {
  /** Folders the local-folder kind may use (operator configuration). */
  localRoots?: readonly string[];
  /**
   * Real paths the local-folder kind never serves, even inside a root (the server's data dir and
   * database): refused like paths outside the root, on every operation.
   */
  localProtected?: readonly string[];
  /**
   * Non-secret state a backend keeps with the cloud, such as an SFTP host key recorded at connect
   * or an OAuth token that was refreshed. Backends read it from `state` and save changes with `saveState`.
   */
  state?: Record<string, unknown>;
  saveState?: (state: Record<string, unknown>) => Promise<void>;
  /** Per-account request rate limit (requests per second), enforced by the pacer. */
  rateLimitPerSecond?: number;
  /**
   * The outbound-connection guard for clouds reached by an address the user gave (WebDAV,
   * S3-compatible, SFTP, FTP): every connection they make goes to an address it checked. Unset
   * (the command line, on the user's own machine): any address.
   */
  outbound?: OutboundGuard;
  /**
   * How long a server reached by address may stay silent (connecting, in its handshake, or in the
   * middle of a request) before the call fails; unset: each backend's own default.
   */
  timeoutMs?: number;
}

export type ProviderFactory = (credentials: Record<string, unknown>, ctx: ProviderContext) => Promise<Provider>;

const factories = new Map<string, ProviderFactory>();

/** Registers a kind's factory (backends call this from their module). */
export function registerKind(kind: string, factory: ProviderFactory): void {
  factories.set(kind, factory);
}

export function registeredKinds(): string[] {
  return [...factories.keys()].sort();
}

/** Opens a provider of a kind with its credentials; throws when the kind has no backend. */
export async function openProvider(
  kind: string,
  credentials: Record<string, unknown>,
  ctx: ProviderContext = {},
): Promise<Provider> {
  const factory = factories.get(kind);
  if (!factory) throw new Error(`no backend for cloud kind ${kind}`);
  return factory(credentials, ctx);
}
