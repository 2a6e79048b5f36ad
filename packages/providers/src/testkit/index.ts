export {
  runConformance,
  patternBytes,
  readAll,
  errorCode,
  type ConformanceFixture,
  type ConformanceOptions,
  type ConformanceCapabilities,
} from './conformance.ts';
