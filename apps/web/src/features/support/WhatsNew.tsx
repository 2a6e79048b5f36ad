import { Alert, Button, Group, List, Modal, Stack, Text } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { STORAGE_KEYS, readJson, writeJson } from '../../lib/storage.ts';
import { useSession } from '../session/store.ts';
import { supportApi } from './api.ts';

/** How often the client asks which version the server runs (it also asks when the window regains focus). */
export const VERSION_POLL_MS = 5 * 60_000;

/**
 * Release notes Markdown as React elements: `- ` lines become list items, `###` lines headings,
 * other lines paragraphs; `**bold**` and `code` marks are dropped. Text is never parsed as HTML.
 */
export function ReleaseNotesView({ markdown }: { markdown: string }) {
  const blocks: Array<{ kind: 'list'; items: string[] } | { kind: 'p' | 'h'; text: string }> = [];
  for (const raw of markdown.split('\n')) {
    const line = raw.replace(/\*\*|`/g, '');
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    const last = blocks.at(-1);
    if (item?.[1] !== undefined) {
      if (last?.kind === 'list') last.items.push(item[1]);
      else blocks.push({ kind: 'list', items: [item[1]] });
    } else if (/^\s+\S/.test(line) && last?.kind === 'list') {
      // A wrapped list item continues the one before.
      last.items[last.items.length - 1] += ` ${line.trim()}`;
    } else if (/^#{1,6}\s/.test(line)) blocks.push({ kind: 'h', text: line.replace(/^#+\s*/, '') });
    else if (line.trim()) blocks.push({ kind: 'p', text: line.trim() });
  }
  return (
    <Stack gap="xs" data-testid="whats-new-content">
      {blocks.map((b, i) =>
        b.kind === 'list' ? (
          <List key={i} size="sm" spacing={4}>
            {b.items.map((it, j) => (
              <List.Item key={j}>{it}</List.Item>
            ))}
          </List>
        ) : (
          <Text key={i} size="sm" fw={b.kind === 'h' ? 600 : undefined}>
            {b.text}
          </Text>
        ),
      )}
    </Stack>
  );
}

/**
 * Notices a deploy: the version the server ran when this page loaded is remembered; when the
 * server later answers another one, a notice offers to reload. After a reload onto a new version,
 * that version's release notes show once.
 */
export function UpdateWatcher() {
  const { t } = useTranslation('support');
  const loadedWith = useRef<string | null>(null);
  const [newer, setNewer] = useState(false);
  const [notes, setNotes] = useState<{ version: string; content: string } | null>(null);
  // Pages that skip start-up (the error page, sign-in callbacks) make no calls.
  const started = useSession((s) => s.started);

  useEffect(() => {
    if (!started) return;
    let live = true;
    const check = async () => {
      try {
        const data = await supportApi.version('current');
        if (!live) return;
        if (loadedWith.current === null) {
          loadedWith.current = data.latest;
          const seen = readJson<string | null>(STORAGE_KEYS.whatsNewSeen, null);
          writeJson(STORAGE_KEYS.whatsNewSeen, data.latest);
          // A first visit has nothing new to tell; a visit after an upgrade has.
          if (seen !== null && seen !== data.latest && data.whats_new_content) {
            setNotes({ version: data.latest, content: data.whats_new_content });
          }
        } else if (data.latest !== loadedWith.current) setNewer(true);
      } catch {
        // Offline or an older server: try again at the next poll.
      }
    };
    void check();
    const timer = setInterval(() => void check(), VERSION_POLL_MS);
    const onFocus = () => void check();
    window.addEventListener('focus', onFocus);
    return () => {
      live = false;
      clearInterval(timer);
      window.removeEventListener('focus', onFocus);
    };
  }, [started]);

  return (
    <>
      {newer && (
        <Alert
          color="blue"
          variant="filled"
          style={{ position: 'fixed', insetInlineEnd: 16, bottom: 16, zIndex: 400, maxWidth: 420 }}
          data-testid="update-available"
        >
          <Group gap="sm" wrap="nowrap">
            <Text size="sm">{t('update.available')}</Text>
            <Button
              size="xs"
              variant="white"
              leftSection={<IconRefresh size={14} aria-hidden />}
              onClick={() => window.location.reload()}
            >
              {t('update.reload')}
            </Button>
          </Group>
        </Alert>
      )}
      <Modal
        opened={notes !== null}
        onClose={() => setNotes(null)}
        title={notes ? t('update.whatsNew', { version: notes.version }) : ''}
        centered
      >
        {notes && (
          <Stack gap="md">
            <ReleaseNotesView markdown={notes.content} />
            <Group justify="flex-end">
              <Button onClick={() => setNotes(null)}>{t('update.gotIt')}</Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </>
  );
}
