export {
  APP_TOKEN_LIFETIME_MS,
  EcologyService,
  officeFrameUrl,
  type AppTokenContext,
  type AppTokenOwner,
} from './ecology-service.ts';
export { FIRST_PARTY_APPS, APP_EXTENSIONS } from './first-party.ts';
