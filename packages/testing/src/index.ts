export * from './process.ts';
export * from './postgres.ts';
export * from './redis.ts';
export * from './apache-webdav.ts';
export * from './rclone-serve.ts';
export * from './sshd.ts';
export * from './vsftpd.ts';
export * from './ftp-srv.ts';
