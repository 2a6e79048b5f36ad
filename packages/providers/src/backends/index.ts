// Importing this module registers every backend kind. One line per backend folder.
export * from './local/index.ts';
export * from './s3/index.ts';
export * from './webdav/index.ts';
export * from './sftp/index.ts';
export * from './google-drive/index.ts';
export * from './ftp/index.ts';
export * from './onedrive/index.ts';
export * from './dropbox/index.ts';
export * from './box/index.ts';
export * from './google-photos/index.ts';
export * from './oauth-common/index.ts';
