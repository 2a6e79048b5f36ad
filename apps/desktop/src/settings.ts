import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';

/**
 * The shell's own settings, one JSON file in the user's app data: which server the window shows,
 * the embedded server's port (kept, so the web app keeps its origin and sign-in), the download
 * folder and the files this client saved (the only ones "open" and "show in folder" accept).
 */
const settingsSchema = z.object({
  mode: z.enum(['local', 'remote']).nullable().default(null),
  remoteUrl: z.string().max(2048).default(''),
  serverPort: z.number().int().min(0).max(65535).default(0),
  downloadPath: z.string().max(4096).default(''),
  savedFiles: z.array(z.string().max(4096)).max(1000).default([]),
  window: z
    .object({ width: z.number().int().min(400), height: z.number().int().min(300), maximized: z.boolean() })
    .partial()
    .default({}),
});

export type DesktopSettings = z.infer<typeof settingsSchema>;

/** How many saved files are remembered for "open" and "show in folder". */
export const SAVED_FILES_KEPT = 500;

export class SettingsStore {
  private data: DesktopSettings;
  private readonly file: string;

  constructor(file: string) {
    this.file = file;
    this.data = SettingsStore.read(file);
  }

  private static read(file: string): DesktopSettings {
    try {
      const parsed = settingsSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success) return parsed.data;
    } catch {
      // Missing or unreadable: start from the defaults.
    }
    return settingsSchema.parse({});
  }

  get(): Readonly<DesktopSettings> {
    return this.data;
  }

  update(patch: Partial<DesktopSettings>): DesktopSettings {
    this.data = settingsSchema.parse({ ...this.data, ...patch });
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.data, null, 2), { mode: 0o600 });
    renameSync(tmp, this.file);
    chmodSync(this.file, 0o600);
    return this.data;
  }

  /** Remembers a file this client saved (the newest last, the oldest forgotten past the limit). */
  rememberSaved(path: string): void {
    const list = this.data.savedFiles.filter((p) => p !== path);
    list.push(path);
    this.update({ savedFiles: list.slice(-SAVED_FILES_KEPT) });
  }

  isSaved(path: string): boolean {
    return this.data.savedFiles.includes(path);
  }
}
