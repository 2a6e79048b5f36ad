export { WopiError, WopiService, wopiStatusOf, type WopiClaims, type WopiServiceOptions } from './wopi-service.ts';
