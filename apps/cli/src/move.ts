/** How `skyferry move` reports the second half of a move (packages/engine/src/move.ts). */
import type { Moved } from '@skyferry/engine';
import type { CliIo } from './io.ts';

export { copiedFiles, deleteMoved } from '@skyferry/engine';

export function printMoved(moved: Moved, io: CliIo, removeEmptyFolders: boolean): void {
  const { deleted, kept, failed, foldersRemoved } = moved;
  const folders = removeEmptyFolders
    ? ` ${foldersRemoved} emptied folder${foldersRemoved === 1 ? '' : 's'} removed.`
    : ' Folders are left in place.';
  io.stdout.write(
    `Moved: ${deleted} source file${deleted === 1 ? '' : 's'} deleted, each once the target was checked to hold the same` +
      `${kept.length ? `; ${kept.length} kept` : ''}.${folders}\n`,
  );
  for (const k of kept) io.stderr.write(`kept: ${k}\n`);
  for (const f of failed) io.stderr.write(`not deleted: ${f}\n`);
}
