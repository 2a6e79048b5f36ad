/** Request headers every main client call sends (spec section 7). */
export const HEADERS = {
  authorization: 'authorization',
  tempAuthorization: 'x-temp-authorization',
  language: 'x-language',
  timezone: 'x-timezone',
  platform: 'x-platform',
  pid: 'x-pid',
  timestamp: 'x-timestamp',
  version: 'x-version',
  tempDebug: 'x-temp-debug',
  uid: 'x-uid',
  email: 'x-email',
  uuid: 'x-uuid',
} as const;

/** Headers only the embedded-app host client sends (spec section 7, "Embedded-app host client"). */
export const EMBEDDED_HOST_HEADERS = {
  clientType: 'x-client-type',
  clientSerial: 'x-client-serial',
  appKey: 'x-app-key',
  productId: 'x-product-id',
  productVersion: 'x-product-version',
} as const;
