export * from './services.ts';
export {
  createPkce,
  exchangeCode,
  refreshGrant,
  revokeGrant,
  idTokenClaims,
  TokenSource,
  tokenFromCredentials,
  type OAuthToken,
  type TokenSourceOptions,
} from './token.ts';
export { ApiClient, bodyStream, KeyedMutex, type ApiRequest, type ErrorInfo, type ErrorMapper } from './http.ts';
export { SequentialChunkWriter, type SequentialTarget } from './sequential-writer.ts';
export { setupOAuth, numberSetting, type OAuthSetup } from './setup.ts';
