export {
  runConformance,
  patternBytes,
  readAll,
  errorCode,
  type ConformanceFixture,
  type ConformanceOptions,
} from './conformance.ts';
