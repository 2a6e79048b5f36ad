export {
  runConformance,
  patternBytes,
  readAll,
  errorCode,
  writeFiles,
  type ConformanceFixture,
  type ConformanceOptions,
  type ConformanceCapabilities,
} from './conformance.ts';
