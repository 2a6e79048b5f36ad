import { Button, Checkbox, Group, SegmentedControl, Select, SimpleGrid, Stack, Text } from '@mantine/core';
import { FILTER_CATEGORIES, SAME_NAME_POLICIES, type FilterCategory, type SameNamePolicy } from '@skyferry/contract';
import { useTranslation } from 'react-i18next';
import { useSession } from '../session/store.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { saveTransferDefaults, usePreferences } from './preferences.ts';

type FilterChoice = 'none' | 'include' | 'exclude';

/** Download location, same-name file handling and the file filter a new transfer starts with. */
export function DefaultsTab() {
  const { t } = useTranslation('settings');
  const defaults = usePreferences((s) => s.transferDefaults);
  const desktop = useSession((s) => s.settings.runtime) !== 'web';
  const filterChoice: FilterChoice = defaults.fileFilter?.mode ?? 'none';
  const selected = new Set<FilterCategory>(defaults.fileFilter?.categories ?? []);
  const setFilter = (mode: FilterChoice, categories: Set<FilterCategory>) => {
    const list = FILTER_CATEGORIES.filter((c) => categories.has(c));
    saveTransferDefaults({
      ...defaults,
      fileFilter: mode === 'none' ? null : { mode, categories: list.length ? list : [...FILTER_CATEGORIES] },
    });
  };
  const choose = async () => {
    const bridge = desktopBridge();
    const path = await bridge?.chooseDirectory?.({ defaultPath: defaults.downloadPath || undefined });
    if (!path) return;
    // The desktop client saves downloads there (and answers the folder it will really use).
    const used = (await bridge?.setDownloadPath?.(path).catch(() => null)) ?? path;
    saveTransferDefaults({ ...defaults, downloadPath: used });
  };
  return (
    <Stack gap="lg" maw={520}>
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          {t('defaults.downloadLocation')}
        </Text>
        {desktop ? (
          <Group gap="sm">
            <Text size="sm" c="dimmed" data-testid="download-path">
              {defaults.downloadPath || t('defaults.systemDownloads')}
            </Text>
            <Button size="xs" variant="light" onClick={() => void choose()}>
              {t('defaults.change')}
            </Button>
          </Group>
        ) : (
          <Text size="sm" c="dimmed">
            {t('defaults.browserDownloads')}
          </Text>
        )}
      </Stack>
      <Select
        label={t('defaults.sameName')}
        value={defaults.sameNamePolicy}
        allowDeselect={false}
        data={SAME_NAME_POLICIES.map((p) => ({ value: p, label: t(`defaults.policies.${p}`) }))}
        onChange={(value) => value && saveTransferDefaults({ ...defaults, sameNamePolicy: value as SameNamePolicy })}
      />
      <Stack gap="xs">
        <Text size="sm" fw={500} id="filter-label">
          {t('defaults.fileFilter')}
        </Text>
        <SegmentedControl
          aria-labelledby="filter-label"
          value={filterChoice}
          onChange={(value) => setFilter(value as FilterChoice, selected)}
          data={[
            { value: 'none', label: t('defaults.filterNone') },
            { value: 'include', label: t('defaults.filterInclude') },
            { value: 'exclude', label: t('defaults.filterExclude') },
          ]}
        />
        {filterChoice !== 'none' && (
          <SimpleGrid cols={{ base: 2, sm: 3 }} spacing="xs">
            {FILTER_CATEGORIES.map((c) => (
              <Checkbox
                key={c}
                label={t(`defaults.categories.${c}`)}
                checked={selected.has(c)}
                onChange={(e) => {
                  const next = new Set(selected);
                  if (e.currentTarget.checked) next.add(c);
                  else next.delete(c);
                  if (next.size > 0) setFilter(filterChoice, next);
                }}
              />
            ))}
          </SimpleGrid>
        )}
        <Text size="xs" c="dimmed">
          {t('defaults.savedAutomatically')}
        </Text>
      </Stack>
    </Stack>
  );
}
