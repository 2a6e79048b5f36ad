import {
  IconBox,
  IconBrandAws,
  IconBrandDropbox,
  IconBrandGoogleDrive,
  IconBrandOnedrive,
  IconBucket,
  IconCloud,
  IconFolder,
  IconFolderShare,
  IconPhoto,
  IconServer,
  IconTerminal2,
  IconWorld,
} from '@tabler/icons-react';

const ICONS: Record<string, typeof IconCloud> = {
  google_drive: IconBrandGoogleDrive,
  google_drive_shared: IconFolderShare,
  onedrive: IconBrandOnedrive,
  onedrive_business: IconBrandOnedrive,
  dropbox: IconBrandDropbox,
  dropbox_business: IconBrandDropbox,
  box: IconBox,
  google_photos: IconPhoto,
  amazon_s3: IconBrandAws,
  wasabi: IconBucket,
  backblaze_b2: IconBucket,
  s3_compatible: IconBucket,
  webdav: IconWorld,
  sftp: IconTerminal2,
  ftp: IconServer,
  local: IconFolder,
};

/** A decorative icon for a cloud kind (the name is always shown or given as a label beside it). */
export function CloudIcon({ kind, size = 18 }: { kind: string; size?: number }) {
  const Icon = ICONS[kind] ?? IconCloud;
  return <Icon size={size} stroke={1.6} aria-hidden />;
}
