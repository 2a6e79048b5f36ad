import { registerKind } from '../../api/registry.ts';
import { openWebdav } from './webdav.ts';

export { WebdavProvider, openWebdav, WEBDAV_TEMP_PREFIX, type WebdavOptions, type WebdavVendor } from './webdav.ts';

registerKind('webdav', (credentials, ctx) => openWebdav(credentials, ctx));
