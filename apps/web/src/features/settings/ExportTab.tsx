import { Button, Checkbox, Group, Radio, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toast } from '../messages/toast.ts';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import { cloudLabel, kindName } from '../shell/clouds.ts';
import { exportTargets } from '../export/model.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { saveExportSettings, usePreferences } from './preferences.ts';
import { Name } from '../../lib/Name.tsx';

/** Export Setting: to local (with a folder in the desktop client), to a chosen cloud, don't remind again. */
export function ExportTab() {
  const { t } = useTranslation('settings');
  const stored = usePreferences((s) => s.exportSettings);
  const clouds = exportTargets(useSession(selectVisibleClouds));
  const desktop = useSession((s) => s.settings.runtime) !== 'web';
  const [draft, setDraft] = useState(stored);
  const choose = async () => {
    const path = await desktopBridge()?.chooseDirectory?.({ defaultPath: draft.localPath || undefined });
    if (path) setDraft((d) => ({ ...d, localPath: path }));
  };
  return (
    <Stack gap="md" maw={480}>
      <Stack gap={6}>
        <Checkbox
          label={t('export.toLocal')}
          checked={draft.saveToLocal}
          onChange={(e) => {
            const checked = e.currentTarget.checked;
            setDraft((d) => ({ ...d, saveToLocal: checked }));
          }}
        />
        {desktop ? (
          <Group gap="sm" ms={30}>
            <Text size="sm" c="dimmed" data-testid="export-path">
              {draft.localPath || t('export.defaultFolder')}
            </Text>
            <Button size="xs" variant="light" onClick={() => void choose()}>
              {t('export.chooseFolder')}
            </Button>
          </Group>
        ) : (
          <Text size="xs" c="dimmed" ms={30}>
            {t('export.browserFolder')}
          </Text>
        )}
      </Stack>
      <Radio.Group
        label={t('export.toCloud')}
        value={draft.defaultCloudId}
        onChange={(value) => setDraft((d) => ({ ...d, defaultCloudId: value }))}
      >
        <Stack gap="xs" mt="xs">
          {clouds.length === 0 ? (
            <Text size="sm" c="dimmed">
              {t('export.noCloud')}
            </Text>
          ) : (
            <>
              <Radio value="" label={t('export.noDefault')} />
              {clouds.map((c) => (
                <Radio
                  key={c.id}
                  value={c.id}
                  label={
                    <>
                      <Name value={cloudLabel(c)} /> ({kindName(c.cloud_name)})
                    </>
                  }
                />
              ))}
            </>
          )}
        </Stack>
      </Radio.Group>
      <Checkbox
        label={t('export.dontRemind')}
        checked={draft.closeExportPanel}
        onChange={(e) => {
          const checked = e.currentTarget.checked;
          setDraft((d) => ({ ...d, closeExportPanel: checked }));
        }}
      />
      <Group>
        <Button
          onClick={() => {
            saveExportSettings(draft);
            toast.success(t('saved'));
          }}
        >
          {t('save')}
        </Button>
      </Group>
    </Stack>
  );
}
