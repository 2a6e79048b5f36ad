import { BoxEmulator, type BoxEmulatorOptions } from './box/emulator.ts';
import { DropboxEmulator } from './dropbox/emulator.ts';
import { GoogleDriveEmulator, type GoogleDriveEmulatorOptions } from './google-drive/emulator.ts';
import { GooglePhotosEmulator } from './google-photos/emulator.ts';
import { OAuthServer } from './oauth/server.ts';
import { OneDriveEmulator, type OneDriveEmulatorOptions } from './onedrive/emulator.ts';

/**
 * Local emulators of the OAuth cloud services (Google Drive, Microsoft Graph / OneDrive, Dropbox,
 * Box, Google Photos) and one OAuth 2.0 authorization server they share. Each is built from the
 * service's published API documentation (cited at the top of its file), runs on 127.0.0.1 with
 * in-memory state, and can inject rate limits (with Retry-After), server errors and expired
 * tokens on demand. They stand in for services that cannot be reached from here; they are not
 * the services themselves.
 */

export * from './oauth/server.ts';
export * from './common/service.ts';
export { quickXorHash, dropboxContentHash, md5Hex, sha1Hex, sha256Hex } from './common/hashes.ts';
export * from './google-drive/emulator.ts';
export * from './onedrive/emulator.ts';
export * from './dropbox/emulator.ts';
export * from './box/emulator.ts';
export * from './google-photos/emulator.ts';

/** OAuth client ids the emulated authorization server knows, one per service family. */
export const EMULATED_CLIENTS = {
  google: {
    clientId: 'google-client-id.apps.googleusercontent.com',
    clientSecret: 'google-client-secret',
    rotateRefreshTokens: false,
  },
  microsoft: {
    clientId: '00000000-0000-0000-0000-00000000c11e',
    clientSecret: 'microsoft-client-secret',
    rotateRefreshTokens: true,
  },
  dropbox: { clientId: 'dropbox-app-key', clientSecret: 'dropbox-app-secret', rotateRefreshTokens: false },
  box: { clientId: 'box-client-id', clientSecret: 'box-client-secret', rotateRefreshTokens: true },
} as const;

export type EmulatedOAuthProvider = keyof typeof EMULATED_CLIENTS;

export interface CloudEmulators {
  oauth: OAuthServer;
  googleDrive: GoogleDriveEmulator;
  oneDrive: OneDriveEmulator;
  dropbox: DropboxEmulator;
  box: BoxEmulator;
  googlePhotos: GooglePhotosEmulator;
  close(): Promise<void>;
}

export interface CloudEmulatorOptions {
  /** Redirect URIs the OAuth clients accept (the server's OAuth callback). */
  redirectUris?: string[];
  latencyMs?: number;
  googleDrive?: Omit<GoogleDriveEmulatorOptions, 'oauth'>;
  oneDrive?: Omit<OneDriveEmulatorOptions, 'oauth'>;
  box?: Omit<BoxEmulatorOptions, 'oauth'>;
}

/** Starts the authorization server and every service emulator. */
export async function startCloudEmulators(options: CloudEmulatorOptions = {}): Promise<CloudEmulators> {
  const oauth = await new OAuthServer().start();
  for (const c of Object.values(EMULATED_CLIENTS)) {
    oauth.registerClient({ ...c, redirectUris: options.redirectUris ?? [] });
  }
  const common = { oauth, ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}) };
  const [googleDrive, oneDrive, dropbox, box, googlePhotos] = await Promise.all([
    new GoogleDriveEmulator({ ...common, ...options.googleDrive }).start(),
    new OneDriveEmulator({ ...common, ...options.oneDrive }).start(),
    new DropboxEmulator(common).start(),
    new BoxEmulator({ ...common, ...options.box }).start(),
    new GooglePhotosEmulator(common).start(),
  ]);
  return {
    oauth,
    googleDrive,
    oneDrive,
    dropbox,
    box,
    googlePhotos,
    async close() {
      await Promise.all([
        googleDrive.close(),
        oneDrive.close(),
        dropbox.close(),
        box.close(),
        googlePhotos.close(),
        oauth.close(),
      ]);
    },
  };
}
