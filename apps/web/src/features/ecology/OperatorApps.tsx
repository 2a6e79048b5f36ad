import { Alert, Button, Checkbox, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import type { AppAction, EcologyApp } from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ecologyApi } from './api.ts';

/**
 * The operator's external apps (Settings > Users, operators only): register an app by its address
 * and the file types it opens; its origin is the only one its messages are accepted from.
 */
export function OperatorApps() {
  const { t } = useTranslation('apps');
  const [apps, setApps] = useState<EcologyApp[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState('');
  const [action, setAction] = useState<AppAction>('view');
  const [login, setLogin] = useState(false);
  const fail = (err: unknown) => setError(err instanceof Error ? err.message : String(err));
  const load = useCallback(() => ecologyApi.listExternal().then((d) => setApps(d.items), fail), []);
  useEffect(() => {
    void load();
  }, [load]);
  const register = async () => {
    try {
      const extensions = types
        .split(/[\s,;]+/)
        .map((x) => x.replace(/^\./, '').toLowerCase())
        .filter(Boolean);
      await ecologyApi.register({
        name,
        url,
        is_mandatory_login: login,
        functions: [{ name, action, extensions }],
      });
      setName('');
      setUrl('');
      setTypes('');
      setError(null);
      await load();
    } catch (err) {
      fail(err);
    }
  };
  return (
    <Stack gap="sm" mt="lg" data-testid="operator-apps">
      <Title order={4}>{t('operator.title')}</Title>
      <Text size="sm" c="dimmed">
        {t('operator.intro')}
      </Text>
      {error && <Alert color="red">{error}</Alert>}
      {apps.length === 0 ? (
        <Text size="sm">{t('operator.none')}</Text>
      ) : (
        <Table>
          <Table.Tbody>
            {apps.map((app) => (
              <Table.Tr key={app.app_id}>
                <Table.Td>{app.name}</Table.Td>
                <Table.Td>{app.origin}</Table.Td>
                <Table.Td>{app.functions.flatMap((f) => f.extensions).join(', ')}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    variant="subtle"
                    color="red"
                    onClick={() => void ecologyApi.remove(app.app_id).then(load, fail)}
                  >
                    {t('operator.remove')}
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Group align="flex-end" wrap="wrap">
        <TextInput label={t('operator.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <TextInput
          label={t('operator.url')}
          placeholder="https://"
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
        />
        <TextInput
          label={t('operator.types')}
          placeholder="png, jpg"
          value={types}
          onChange={(e) => setTypes(e.currentTarget.value)}
        />
        <Select
          label={t('operator.action')}
          value={action}
          allowDeselect={false}
          onChange={(v) => v && setAction(v as AppAction)}
          data={(['view', 'edit', 'convert'] as const).map((a) => ({ value: a, label: t(`action.${a}`) }))}
        />
        <Checkbox label={t('loginRequired')} checked={login} onChange={(e) => setLogin(e.currentTarget.checked)} />
        <Button disabled={!name.trim() || !url.trim()} onClick={() => void register()}>
          {t('operator.register')}
        </Button>
      </Group>
    </Stack>
  );
}
