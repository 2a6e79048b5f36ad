import { registerKind } from '../../api/registry.ts';
import { openOneDrive } from './onedrive.ts';

export { OneDriveProvider, openOneDrive, graphError } from './onedrive.ts';

registerKind('onedrive', (credentials, ctx) => openOneDrive('onedrive', credentials, ctx));
registerKind('onedrive_business', (credentials, ctx) => openOneDrive('onedrive_business', credentials, ctx));
