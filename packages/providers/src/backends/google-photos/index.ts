import { registerKind } from '../../api/registry.ts';
import { openGooglePhotos } from './google-photos.ts';

export { GooglePhotosProvider, openGooglePhotos, photosError, photosMediaKind } from './google-photos.ts';

registerKind('google_photos', (credentials, ctx) => openGooglePhotos(credentials, ctx));
