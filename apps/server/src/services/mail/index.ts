export * from './catalogue.ts';
export * from './mailer.ts';
export * from './transfer-finished.ts';
export * from './account-catalogue.ts';
export * from './account-mail.ts';
export * from './support-mail.ts';
