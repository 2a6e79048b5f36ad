import { registerKind } from '../../api/registry.ts';
import { openDropbox } from './dropbox.ts';

export { DropboxProvider, openDropbox, dropboxError } from './dropbox.ts';

registerKind('dropbox', (credentials, ctx) => openDropbox('dropbox', credentials, ctx));
registerKind('dropbox_business', (credentials, ctx) => openDropbox('dropbox_business', credentials, ctx));
