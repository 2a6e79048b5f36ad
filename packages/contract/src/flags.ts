/** Folder-permission bit flags (spec section 3). */
export const Permission = {
  none: 0,
  read: 1,
  write: 2,
  readWrite: 3,
  delete: 4,
  mkdir: 8,
  rename: 16,
  all: -1,
} as const;

/** Cloud capability flags add these to the permission bits. */
export const CloudFlag = {
  slim: 256,
  usingDetail: 512,
  /** Valid only together with write. */
  transferIn: 1024,
} as const;

export function hasFlag(flags: number, flag: number): boolean {
  // `all` is -1: every bit set, so the masks below hold for it too.
  if (flag === 0) return true;
  if (flag === CloudFlag.transferIn) return (flags & CloudFlag.transferIn) !== 0 && (flags & Permission.write) !== 0;
  return (flags & flag) === flag;
}

export function canRead(flags: number): boolean {
  return hasFlag(flags, Permission.read);
}
export function canWrite(flags: number): boolean {
  return hasFlag(flags, Permission.write);
}
export function canMkdir(flags: number): boolean {
  return hasFlag(flags, Permission.mkdir);
}
export function canSlim(flags: number): boolean {
  return hasFlag(flags, CloudFlag.slim);
}
export function hasUsageDetail(flags: number): boolean {
  return hasFlag(flags, CloudFlag.usingDetail);
}
/** A cloud can receive transfers only when it has transfer-in and write. */
export function canTransferIn(flags: number): boolean {
  return hasFlag(flags, CloudFlag.transferIn);
}

/** Every capability bit: what "all capabilities" means for a cloud kind. */
export const ALL_CLOUD_FLAGS =
  Permission.read |
  Permission.write |
  Permission.delete |
  Permission.mkdir |
  Permission.rename |
  CloudFlag.slim |
  CloudFlag.usingDetail |
  CloudFlag.transferIn;
export const READ_ONLY_CLOUD_FLAGS = Permission.read | CloudFlag.usingDetail;
