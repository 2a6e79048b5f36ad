import { OAUTH_KINDS } from '../services.ts';
import { runLiveConformance } from './live-conformance.ts';

// The kinds named on the command line (npm run test:live -- google_drive onedrive), through run.ts.
const requested = (process.env.SKYFERRY_LIVE_KINDS ?? '').split(',').filter(Boolean);
const kinds = requested.length ? requested : Object.keys(OAUTH_KINDS);
for (const kind of kinds) {
  if (!OAUTH_KINDS[kind]) throw new Error(`unknown OAuth kind ${kind} (one of ${Object.keys(OAUTH_KINDS).join(', ')})`);
  runLiveConformance(kind);
}
