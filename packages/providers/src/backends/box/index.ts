import { registerKind } from '../../api/registry.ts';
import { openBox } from './box.ts';

export { BoxProvider, openBox, boxError } from './box.ts';

registerKind('box', (credentials, ctx) => openBox(credentials, ctx));
