import type { FileItem } from '@skyferry/contract';

/** The drag data type of explorer rows carried to another pane (files from the desktop are 'Files'). */
export const PANE_DRAG_TYPE = 'application/x-skyferry-items';

/** What a drag of explorer rows carries: the cloud and folder they are in, and the items. */
export interface PaneDrag {
  cloudId: string;
  folder: string;
  items: FileItem[];
}

export function encodePaneDrag(drag: PaneDrag): string {
  return JSON.stringify(drag);
}

/** The rows a drop carries, or null when the data is not a drag of explorer rows. */
export function decodePaneDrag(data: string): PaneDrag | null {
  try {
    const d = JSON.parse(data) as Partial<PaneDrag>;
    if (typeof d.cloudId !== 'string' || typeof d.folder !== 'string' || !Array.isArray(d.items)) return null;
    const items = d.items.filter(
      (i): i is FileItem =>
        typeof i === 'object' &&
        i !== null &&
        typeof i.path === 'string' &&
        typeof i.name === 'string' &&
        (i.type === 0 || i.type === 1),
    );
    return items.length > 0 ? { cloudId: d.cloudId, folder: d.folder, items } : null;
  } catch {
    return null;
  }
}

/** Whether a drag over a pane carries explorer rows (its data can be read only on drop). */
export function carriesPaneDrag(types: readonly string[]): boolean {
  return types.includes(PANE_DRAG_TYPE);
}
