import { registerKind } from '../../api/registry.ts';
import { openLocal } from './local.ts';

export { LocalProvider, openLocal, LOCAL_TEMP_PREFIX, LOCAL_TRASH_DIR, type LocalOptions } from './local.ts';

registerKind('local', (credentials, ctx) => openLocal(credentials, ctx));
