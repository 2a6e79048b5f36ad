// Zod schemas of every call, one file per area. Server routes validate with them; the web client types its calls with them.
export * from './common.ts';
export * from './accounts.ts';
export * from './clouds.ts';
export * from './tasks.ts';
export * from './runs.ts';
export * from './files.ts';
export * from './cleanup.ts';
export * from './oauth.ts';
export * from './operator.ts';
export * from './support.ts';
export * from './ecology.ts';
export * from './billing.ts';
export * from './exports.ts';
export * from './wopi.ts';
