import { Modal, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { DialogSlotProps } from '../../../app/slot-types.ts';

/** Until the feedback dialog lands: points to the support entry. */
export function PlaceholderFeedback({ opened, onClose }: DialogSlotProps) {
  const { t } = useTranslation('shell');
  return (
    <Modal opened={opened} onClose={onClose} title={t('user.feedback')} centered>
      <Text size="sm">{t('support.feedbackLater')}</Text>
    </Modal>
  );
}
