import { Modal, Tabs, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { DialogSlotProps } from '../../../app/slots.tsx';

/** The Transmission list frame with its two tabs, empty until the transfer feature fills it. */
export function PlaceholderTransmissionList({ opened, onClose }: DialogSlotProps) {
  const { t } = useTranslation('shell');
  return (
    <Modal opened={opened} onClose={onClose} title={t('transmission.title')} size="lg" centered>
      <Tabs defaultValue="running">
        <Tabs.List>
          <Tabs.Tab value="running">{t('transmission.running', { n: 0 })}</Tabs.Tab>
          <Tabs.Tab value="completed">{t('transmission.completed', { n: 0 })}</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="running" pt="md">
          <Text size="sm" c="dimmed">
            {t('transmission.empty')}
          </Text>
        </Tabs.Panel>
        <Tabs.Panel value="completed" pt="md">
          <Text size="sm" c="dimmed">
            {t('transmission.empty')}
          </Text>
        </Tabs.Panel>
      </Tabs>
    </Modal>
  );
}
