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
