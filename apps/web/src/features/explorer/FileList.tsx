import { Box, Checkbox, Group, Text, UnstyledButton } from '@mantine/core';
import { IconArrowDown, IconArrowUp } from '@tabler/icons-react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { RemoteFileType, formatBytes, plainName, type FileItem } from '@skyferry/contract';
import { memo, useMemo, useRef, type DragEvent, type KeyboardEvent, type MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { clickRow, isImage, keyDown, type Selection, type Sort, type SortKey } from './model.ts';
import classes from './Explorer.module.css';
import { Name } from '../../lib/Name.tsx';

export const ROW_HEIGHT = 40;
/** More than the rows any window shows at once (with overscan), so slot keys never collide. */
const ROW_SLOTS = 256;

export interface FileListProps {
  items: readonly FileItem[];
  sort: Sort;
  onSort: (key: SortKey) => void;
  selection: Selection;
  onSelection: (next: Selection) => void;
  onOpen: (item: FileItem) => void;
  height: number | string;
  /** F2 asks to rename the selection, Delete (Cmd+Backspace on a Mac) to delete it. */
  onCommand?: (command: 'rename' | 'delete') => void;
  /** A right click (or the context-menu key) on the list, where the menu should open. */
  onContextMenu?: (at: { x: number; y: number }) => void;
  /**
   * Rows can be dragged (to the other pane): told the dragged items (the selection when the row is
   * in it, else that row alone), answers the drag's type and data.
   */
  onDragItems?: (items: FileItem[]) => { type: string; data: string };
}

const pad = (n: number) => String(n).padStart(2, '0');
/** YYYY/MM/DD HH:mm:ss in the browser's zone, without a formatter per row (thousands of rows scroll by). */
export function formatModified(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The command a key gives in the list: F2 renames; Delete (Cmd+Backspace on a Mac) deletes. */
export function commandOfKey(key: string, mods: { meta: boolean; mac: boolean }): 'rename' | 'delete' | null {
  if (key === 'F2') return 'rename';
  if (key === 'Delete' || (mods.mac && mods.meta && key === 'Backspace')) return 'delete';
  return null;
}

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

/**
 * The folder's entries as a virtualized grid (only the rows in view exist in the page, so 100 000
 * entries scroll as smoothly as 10): name, size, modified date, each column sortable; rows are
 * selected with the mouse (click, Ctrl/Cmd, Shift) and the keyboard (arrows, Home/End,
 * PageUp/PageDown, Space, Ctrl/Cmd+A, Escape; Enter opens, F2 renames, Delete deletes).
 */
export function FileList({
  items,
  sort,
  onSort,
  selection,
  onSelection,
  onOpen,
  height,
  onCommand,
  onContextMenu,
  onDragItems,
}: FileListProps) {
  const { t } = useTranslation('explorer');
  const scroller = useRef<HTMLDivElement>(null);
  // The grid itself takes the focus (a composite role, so aria-activedescendant names the row).
  const grid = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- the list re-renders on scroll by design
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 6,
    // Before the first measurement (and in tests without layout): a typical viewport.
    initialRect: { width: 1000, height: 600 },
  });
  const paths = useMemo(() => items.map((i) => i.path), [items]);

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    // Keys on the header's controls (select all, the sort buttons) are theirs.
    if (e.target !== e.currentTarget) return;
    const toggle = isMac ? e.metaKey : e.ctrlKey;
    const command = commandOfKey(e.key, { meta: e.metaKey, mac: isMac });
    if (command && onCommand && selection.selected.size > 0) {
      e.preventDefault();
      onCommand(command);
      return;
    }
    if (e.key === 'Enter' && selection.focus !== null) {
      const item = items[selection.focus];
      if (item) onOpen(item);
      e.preventDefault();
      return;
    }
    const pageSize = Math.max(1, Math.floor((scroller.current?.clientHeight ?? 400) / ROW_HEIGHT) - 1);
    const next = keyDown(selection, paths, e.key, { toggle, range: e.shiftKey, pageSize });
    if (!next) return;
    e.preventDefault();
    onSelection(next);
    if (next.focus !== null) virtualizer.scrollToIndex(next.focus, { align: 'auto' });
  };

  /** The row an event happened in (clicks are handled once, on the list, not per row). */
  const rowIndexOf = (e: MouseEvent): number | null => {
    const row = (e.target as HTMLElement).closest('[data-index]');
    const index = row ? Number(row.getAttribute('data-index')) : NaN;
    return Number.isInteger(index) ? index : null;
  };
  const onListClick = (e: MouseEvent) => {
    const index = rowIndexOf(e);
    if (index === null) return;
    // The row's check box toggles, like Ctrl/Cmd+click.
    const onBox = (e.target as HTMLElement).tagName === 'INPUT';
    const toggle = onBox || (isMac ? e.metaKey : e.ctrlKey);
    onSelection(clickRow(selection, paths, index, { toggle, range: e.shiftKey }));
    grid.current?.focus({ preventScroll: true });
  };
  const onListContextMenu = (e: MouseEvent) => {
    if (!onContextMenu) return;
    e.preventDefault();
    const index = rowIndexOf(e);
    // A right click on a row outside the selection selects that row alone, as file managers do.
    if (index !== null && !selection.selected.has(paths[index] ?? '')) onSelection(clickRow(selection, paths, index));
    grid.current?.focus({ preventScroll: true });
    onContextMenu({ x: e.clientX, y: e.clientY });
  };
  // The row pressed: a drag starts from it (Chromium may name another of the translated rows as the target).
  const pressed = useRef<number | null>(null);
  const onListMouseDown = (e: MouseEvent) => {
    pressed.current = rowIndexOf(e);
  };
  const onListDragStart = (e: DragEvent) => {
    const index = pressed.current ?? rowIndexOf(e);
    const item = index === null ? undefined : items[index];
    if (!onDragItems || index === null || !item) return;
    let dragged = items.filter((i) => selection.selected.has(i.path));
    if (!selection.selected.has(item.path)) {
      dragged = [item];
      onSelection(clickRow(selection, paths, index));
    }
    const { type, data } = onDragItems(dragged);
    e.dataTransfer.setData(type, data);
    e.dataTransfer.effectAllowed = 'copyMove';
  };
  const onListDoubleClick = (e: MouseEvent) => {
    const index = rowIndexOf(e);
    const item = index === null ? undefined : items[index];
    if (item) onOpen(item);
  };

  const header = (key: SortKey, label: string, className: string) => (
    <UnstyledButton
      className={className}
      onClick={() => onSort(key)}
      aria-sort={sort.key === key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
      role="columnheader"
      data-testid={`sort-${key}`}
    >
      {/* A header sits over its values: the size column's at the end, as its numbers are. */}
      <Group gap={4} wrap="nowrap" justify={key === 'size' ? 'flex-end' : 'flex-start'}>
        <Text size="xs" fw={600} c="dimmed">
          {label}
        </Text>
        {sort.key === key &&
          (sort.dir === 'asc' ? <IconArrowUp size={12} aria-hidden /> : <IconArrowDown size={12} aria-hidden />)}
      </Group>
    </UnstyledButton>
  );

  const activeId = selection.focus !== null ? `file-row-${selection.focus}` : undefined;
  const allSelected = items.length > 0 && selection.selected.size === items.length;

  return (
    <Box
      ref={grid}
      className={classes.list}
      role="grid"
      aria-multiselectable="true"
      aria-rowcount={items.length + 1}
      aria-label={t('listLabel')}
      tabIndex={0}
      onKeyDown={onKey}
      aria-activedescendant={activeId}
    >
      <div className={classes.headerRow} role="row" aria-rowindex={1}>
        <span className={classes.checkCell} role="columnheader">
          <Checkbox
            size="xs"
            aria-label={t('selectAll')}
            checked={allSelected}
            indeterminate={selection.selected.size > 0 && !allSelected}
            onChange={() =>
              onSelection(
                allSelected
                  ? { selected: new Set(), anchor: null, focus: selection.focus }
                  : { selected: new Set(paths), anchor: 0, focus: selection.focus },
              )
            }
          />
        </span>
        {header('name', t('column.name'), classes.nameCell ?? '')}
        {header('size', t('column.size'), classes.sizeCell ?? '')}
        {header('modified', t('column.modified'), classes.dateCell ?? '')}
      </div>
      <div
        ref={scroller}
        className={classes.scroller}
        style={{ height }}
        onClick={onListClick}
        onDoubleClick={onListDoubleClick}
        onContextMenu={onListContextMenu}
        onMouseDown={onDragItems ? onListMouseDown : undefined}
        onDragStart={onListDragStart}
        data-testid="file-list"
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}>
          {virtualizer.getVirtualItems().map((v) => {
            const item = items[v.index] as FileItem;
            return (
              <Row
                // Keys by slot, not by path: rows scrolling in reuse the elements of rows scrolling out.
                key={`slot-${v.index % ROW_SLOTS}`}
                item={item}
                index={v.index}
                top={v.start}
                selected={selection.selected.has(item.path)}
                focused={selection.focus === v.index}
                draggable={onDragItems !== undefined}
              />
            );
          })}
        </div>
      </div>
    </Box>
  );
}

interface RowProps {
  item: FileItem;
  index: number;
  top: number;
  selected: boolean;
  focused: boolean;
  draggable: boolean;
}

/** One row: plain elements only (no per-row components or handlers), so scrolling mounts rows cheaply. */
const Row = memo(function Row({ item, index, top, selected, focused, draggable }: RowProps) {
  const folder = item.type === RemoteFileType.folder;
  return (
    <div
      id={`file-row-${index}`}
      role="row"
      aria-rowindex={index + 2}
      aria-selected={selected}
      data-index={index}
      data-selected={selected || undefined}
      data-focused={focused || undefined}
      data-testid="file-row"
      data-name={item.name}
      draggable={draggable || undefined}
      className={classes.row}
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
    >
      <span className={classes.checkCell} role="gridcell">
        <input
          type="checkbox"
          className={classes.check}
          checked={selected}
          tabIndex={-1}
          aria-label={plainName(item.name)}
          readOnly
        />
      </span>
      <span className={classes.nameCell} role="gridcell">
        <span className={classes.icon} data-kind={folder ? 'folder' : isImage(item) ? 'image' : 'file'} aria-hidden />
        <span className={classes.name} title={plainName(item.name)}>
          <Name value={item.name} />
        </span>
      </span>
      {/* Sizes and times read as written ("12.06 KB") in right-to-left languages too. */}
      <span className={classes.sizeCell} role="gridcell">
        {folder ? '—' : <bdi dir="ltr">{formatBytes(item.size)}</bdi>}
      </span>
      <span className={classes.dateCell} role="gridcell">
        {item.modified > 0 ? <bdi dir="ltr">{formatModified(item.modified)}</bdi> : '—'}
      </span>
    </div>
  );
});
