export {
  FilesService,
  parseRange,
  toFileItem,
  commonParent,
  entryEtag,
  type Download,
  type DeleteResult,
} from './files-service.ts';
export { ListingCache } from './listing-cache.ts';
export { zipStream, zipLength, type ZipEntry } from './zip.ts';
export { isSafeInline, mimeOf } from './mime.ts';
