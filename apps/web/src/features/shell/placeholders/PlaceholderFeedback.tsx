import { Button, Modal, Stack, Text } from '@mantine/core';
import { IconFolderOpen } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { DialogSlotProps } from '../../../app/slot-types.ts';
import { desktopBridge } from '../desktop.ts';

/**
 * Until the feedback dialog lands: points to the support entry, and in the desktop client opens
 * the log folder so its files can go with the message (the bridge's readLog gives the feedback
 * dialog the log's end to attach).
 */
export function PlaceholderFeedback({ opened, onClose }: DialogSlotProps) {
  const { t } = useTranslation('shell');
  const bridge = desktopBridge();
  return (
    <Modal opened={opened} onClose={onClose} title={t('user.feedback')} centered>
      <Stack gap="sm">
        <Text size="sm">{t('support.feedbackLater')}</Text>
        {bridge?.openLogFolder && (
          <>
            <Text size="sm">{t('support.logHint')}</Text>
            <Button
              variant="light"
              leftSection={<IconFolderOpen size={16} aria-hidden />}
              onClick={() => bridge.openLogFolder?.()}
              data-testid="open-log-folder"
            >
              {t('support.openLogFolder')}
            </Button>
          </>
        )}
      </Stack>
    </Modal>
  );
}
