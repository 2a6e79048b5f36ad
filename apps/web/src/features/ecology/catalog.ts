import type { EcologyApp, FileItem } from '@skyferry/contract';
import { onSessionEvent } from '../session/events.ts';
import { ecologyApi } from './api.ts';
import { openApp, type OpenedFile } from './tabs.ts';

let catalog: Promise<EcologyApp[]> | null = null;
// A login may bring apps the visitor did not see (login-required ones): the list is read again.
onSessionEvent('login', () => {
  catalog = null;
});

/** The registry's apps, fetched once per page (again after a failure). */
export function appCatalog(): Promise<EcologyApp[]> {
  if (!catalog) {
    catalog = ecologyApi.list().then((d) => d.items);
    catalog.catch(() => {
      catalog = null;
    });
  }
  return catalog;
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** Apps with a function that takes this file, in registry order (first-party first), with that function. */
export function appsFor(apps: readonly EcologyApp[], name: string): Array<{ app: EcologyApp; functionId: number }> {
  const ext = extensionOf(name);
  if (!ext) return [];
  return apps.flatMap((app) => {
    const fn = app.functions.find((f) => f.extensions.includes(ext));
    return fn ? [{ app, functionId: fn.id }] : [];
  });
}

/**
 * Opens a file of a folder with an app: a viewing app also gets the folder's other files it takes
 * (next and previous), an editing one the file alone.
 */
export function openFileWith(
  choice: { app: EcologyApp; functionId: number },
  cloudId: string,
  file: FileItem,
  siblings: readonly FileItem[],
): boolean {
  const fn = choice.app.functions.find((f) => f.id === choice.functionId);
  const together =
    fn?.action === 'view'
      ? siblings.filter((s) => s.type === 1 && fn.extensions.includes(extensionOf(s.name))).slice(0, 500)
      : [file];
  const files: OpenedFile[] = (together.some((s) => s.path === file.path) ? together : [file]).map((s) => ({
    cloud_id: cloudId,
    path: s.path,
    name: s.name,
  }));
  return openApp(choice.app, {
    functionId: choice.functionId,
    files,
    current: Math.max(
      0,
      files.findIndex((f) => f.path === file.path),
    ),
  });
}
