import { registerKind } from '../../api/registry.ts';
import { openGoogleDrive } from './google-drive.ts';

export {
  GoogleDriveProvider,
  openGoogleDrive,
  setGoogleDocsMode,
  googleDocsLeftOut,
  driveError,
  DOCS_EXPORTS,
  type GoogleDocsMode,
} from './google-drive.ts';

registerKind('google_drive', (credentials, ctx) => openGoogleDrive('google_drive', credentials, ctx));
registerKind('google_drive_shared', (credentials, ctx) => openGoogleDrive('google_drive_shared', credentials, ctx));
