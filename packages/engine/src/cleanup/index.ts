export * from './types.ts';
export { scanForCleanup } from './scan.ts';
export { findDuplicates, commonHashType, EDGE_BYTES_DEFAULT } from './duplicates.ts';
export { findEmptyFolders } from './empty-folders.ts';
export { walkTree, type WalkResult, type WalkedFile } from './walk.ts';
export {
  removeScannedFile,
  removeEmptyFolder,
  anyCopyRemains,
  type RemoveOutcome,
  type ExpectedFile,
} from './remove.ts';
export { recordReads, overlappingReads, type RecordedRead } from './read-recorder.ts';
