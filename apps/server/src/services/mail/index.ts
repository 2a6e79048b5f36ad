export * from './catalogue.ts';
export * from './mailer.ts';
export * from './transfer-finished.ts';
