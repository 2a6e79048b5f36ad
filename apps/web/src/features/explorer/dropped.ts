/** A file picked or dropped, with its path relative to the folder it is uploaded into ("a/b.txt"). */
export interface PickedFile {
  file: File;
  relativePath: string;
}

/** What was dropped or picked: files (with folders in their relative paths) and folders that are empty. */
export interface Picked {
  files: PickedFile[];
  emptyFolders: string[];
}

/** The minimal parts of the File and Directory Entries API this uses (webkitGetAsEntry). */
interface EntryLike {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
}
interface FileEntryLike extends EntryLike {
  file(ok: (f: File) => void, fail: (e: unknown) => void): void;
}
interface DirEntryLike extends EntryLike {
  createReader(): { readEntries(ok: (entries: EntryLike[]) => void, fail: (e: unknown) => void): void };
}

function fileOf(entry: FileEntryLike): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

/** Every child of a folder: readEntries answers in batches (100 in Chromium) until an empty one. */
async function childrenOf(dir: DirEntryLike): Promise<EntryLike[]> {
  const reader = dir.createReader();
  const all: EntryLike[] = [];
  for (;;) {
    const batch = await new Promise<EntryLike[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return all;
    all.push(...batch);
  }
}

async function walk(entry: EntryLike, prefix: string, out: Picked): Promise<void> {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    out.files.push({ file: await fileOf(entry as FileEntryLike), relativePath: path });
    return;
  }
  if (!entry.isDirectory) return;
  const children = await childrenOf(entry as DirEntryLike);
  if (children.length === 0) out.emptyFolders.push(path);
  for (const child of children) await walk(child, path, out);
}

/**
 * The files of a drop, folders included (walked through webkitGetAsEntry); falls back to the plain
 * file list where entries are not available. Entries must be taken synchronously in the drop event.
 */
export async function pickedFromDataTransfer(dt: DataTransfer): Promise<Picked> {
  const out: Picked = { files: [], emptyFolders: [] };
  const entries: EntryLike[] = [];
  const items = dt.items ? Array.from(dt.items) : [];
  for (const item of items) {
    if (item.kind !== 'file') continue;
    const entry = (item as DataTransferItem & { webkitGetAsEntry?: () => EntryLike | null }).webkitGetAsEntry?.();
    if (entry) entries.push(entry);
  }
  if (entries.length === 0) {
    for (const file of Array.from(dt.files ?? [])) out.files.push({ file, relativePath: file.name });
    return out;
  }
  for (const entry of entries) await walk(entry, '', out);
  return out;
}

/** The files of an <input type=file> (with webkitdirectory, each carries its folder path). */
export function pickedFromInput(files: FileList | readonly File[]): Picked {
  return {
    files: Array.from(files).map((file) => ({
      file,
      relativePath: (file as File & { webkitRelativePath?: string }).webkitRelativePath || file.name,
    })),
    emptyFolders: [],
  };
}
