export * from './memory-provider.ts';
export { RCLONE_ENV, rcloneCheck, type CheckMark } from './backends.ts';
