export {
  runConformance,
  patternBytes,
  readAll,
  errorCode,
  writeFiles,
  checkNameSearch,
  SEARCH_FOUND,
  type ConformanceFixture,
  type ConformanceOptions,
  type ConformanceCapabilities,
} from './conformance.ts';
