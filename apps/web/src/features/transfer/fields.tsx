import { Group, Radio, Stack } from '@mantine/core';
import { SAME_NAME_POLICIES, SYNC_MODES, type SameNamePolicy, type SyncMode } from '@skyferry/contract';
import { useTranslation } from 'react-i18next';

/** The four sync modes, each with what it does (the Sync screen, and a task's Edit). */
export function SyncModeField({
  value,
  onChange,
  testIdPrefix,
  guide,
}: {
  value: SyncMode;
  onChange: (mode: SyncMode) => void;
  testIdPrefix: string;
  guide?: string;
}) {
  const { t } = useTranslation('transfer');
  return (
    <Radio.Group label={t('syncMode')} value={value} onChange={(v) => onChange(v as SyncMode)} data-guide={guide}>
      <Stack gap="xs" mt="xs">
        {SYNC_MODES.map((m) => (
          <Radio
            key={m}
            value={m}
            label={t(`modes.${m}`)}
            description={t(`modeHints.${m}`)}
            data-testid={`${testIdPrefix}-${m}`}
          />
        ))}
      </Stack>
    </Radio.Group>
  );
}

/** The four same-name policies (migrations, one-way and incremental syncs). */
export function SameNamePolicyField({
  value,
  onChange,
  testIdPrefix,
}: {
  value: SameNamePolicy;
  onChange: (policy: SameNamePolicy) => void;
  testIdPrefix: string;
}) {
  const { t } = useTranslation('transfer');
  return (
    <Radio.Group label={t('sameName')} value={value} onChange={(v) => onChange(v as SameNamePolicy)}>
      <Group gap="md" mt="xs">
        {SAME_NAME_POLICIES.map((p) => (
          <Radio key={p} value={p} label={t(`settings:defaults.policies.${p}`)} data-testid={`${testIdPrefix}-${p}`} />
        ))}
      </Group>
    </Radio.Group>
  );
}
