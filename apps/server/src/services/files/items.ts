import { RemoteFileType, type FileItem } from '@skyferry/contract';
import type { Entry } from '@skyferry/providers';

export function toFileItem(e: Entry): FileItem {
  return {
    id: e.id ?? e.path,
    name: e.name,
    path: e.path,
    type: e.kind === 'dir' ? RemoteFileType.folder : RemoteFileType.file,
    size: e.kind === 'dir' ? 0 : e.size,
    modified: e.modTime ? e.modTime.getTime() : 0,
    mime_type: e.mimeType ?? null,
  };
}
