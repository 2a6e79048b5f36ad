import { Box, CloseButton, Group, Paper, Text } from '@mantine/core';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { encode } from 'uqr';
import { STORAGE_KEYS, readJson, writeJson } from '../../lib/storage.ts';
import { qrPanelVisible } from './rules.ts';

/** A QR code as SVG squares (no script, no image request). */
export function QrCode({ value, size = 120, label }: { value: string; size?: number; label: string }) {
  const matrix = useMemo(() => encode(value, { border: 1 }).data, [value]);
  const n = matrix.length;
  const path = useMemo(() => {
    let d = '';
    matrix.forEach((row, y) =>
      row.forEach((on, x) => {
        if (on) d += `M${x} ${y}h1v1h-1z`;
      }),
    );
    return d;
  }, [matrix]);
  return (
    <svg width={size} height={size} viewBox={`0 0 ${n} ${n}`} role="img" aria-label={label} shapeRendering="crispEdges">
      <rect width={n} height={n} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}

/**
 * The "on your phone" QR panel, at the foot of the sidebar (so it never covers a screen's own
 * controls); once closed it stays hidden for 24 hours. The layout leaves it out on phones.
 */
export function QrPanel() {
  const { t } = useTranslation('messages');
  const [visible, setVisible] = useState(() =>
    qrPanelVisible(readJson<number | null>(STORAGE_KEYS.qrClosedAt, null), Date.now()),
  );
  if (!visible) return null;
  const close = () => {
    writeJson(STORAGE_KEYS.qrClosedAt, Date.now());
    setVisible(false);
  };
  return (
    <Box data-testid="qr-panel" pt="xs">
      <Paper p="xs" withBorder radius="md" w={148} mx="auto" role="region" aria-label={t('qr.title')}>
        <Group justify="space-between" align="flex-start" wrap="nowrap" mb={4} gap={4}>
          <Text size="xs" fw={600}>
            {t('qr.title')}
          </Text>
          <CloseButton size="sm" aria-label={t('qr.close')} onClick={close} />
        </Group>
        <QrCode value={window.location.origin} size={124} label={t('qr.code', { url: window.location.origin })} />
        <Text size="xs" c="dimmed" mt={2}>
          {t('qr.hint')}
        </Text>
      </Paper>
    </Box>
  );
}
