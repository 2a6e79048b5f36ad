import { Badge, Group, Modal, SimpleGrid, Stack, Text, UnstyledButton } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { DialogSlotProps } from '../../../app/slots.tsx';
import { useSession } from '../../session/store.ts';
import { CloudIcon } from '../CloudIcon.tsx';
import { kindName } from '../clouds.ts';

/** Lists the cloud kinds this server offers; the connect forms arrive with cloud management. */
export function PlaceholderConnectCloud({ opened, onClose, kind }: DialogSlotProps & { kind: string | null }) {
  const { t } = useTranslation('shell');
  const kinds = useSession((s) => s.systemClouds);
  return (
    <Modal opened={opened} onClose={onClose} title={t('connect.title')} size="lg" centered>
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          {t('connect.intro')}
        </Text>
        <SimpleGrid cols={{ base: 2, sm: 3 }} spacing="xs" data-guide="add-drive-selectone">
          {kinds.map((k) => (
            <UnstyledButton
              key={k.cloud_name}
              disabled={!k.available}
              aria-disabled={!k.available}
              title={k.available ? undefined : (k.reason ?? undefined)}
              className="sf-kind-card"
              data-selected={kind === k.cloud_name || undefined}
            >
              <Group gap={8} wrap="nowrap">
                <CloudIcon kind={k.cloud_name} size={22} />
                <Stack gap={0} style={{ minWidth: 0 }}>
                  <Text size="sm" truncate="end">
                    {k.display_name || kindName(k.cloud_name)}
                  </Text>
                  {!k.available && (
                    <Badge size="xs" color="gray" variant="light">
                      {t('connect.unavailable')}
                    </Badge>
                  )}
                </Stack>
              </Group>
            </UnstyledButton>
          ))}
        </SimpleGrid>
      </Stack>
    </Modal>
  );
}
