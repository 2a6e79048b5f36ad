import { Alert, Badge, Code, Group, Loader, Pagination, Stack, Switch, Table, Text } from '@mantine/core';
import type { OperatorUser, OperatorUsersData } from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { OperatorPlans } from '../buy/OperatorPlans.tsx';
import { operatorApi } from './api.ts';

const PAGE_SIZE = 50;

/**
 * Users (operators only): the server's accounts and whether each may use local folders. An allowed
 * user gets a folder of their own under each allowed root; operators use every root.
 */
export function OperatorTab() {
  const { t } = useTranslation('settings');
  const [page, setPage] = useState(1);
  const [data, setData] = useState<OperatorUsersData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(
    async (p: number) => {
      try {
        setData(await operatorApi.users(p, PAGE_SIZE));
        setError(null);
      } catch (err) {
        setError(err instanceof Error && err.message ? err.message : t('operator.loadFailed'));
      }
    },
    [t],
  );
  useEffect(() => {
    void load(page);
  }, [load, page]);

  const toggle = async (user: OperatorUser, granted: boolean) => {
    setBusy(user.uid);
    try {
      const updated = await operatorApi.setLocalFolder(user.uid, granted);
      setData((d) => (d ? { ...d, items: d.items.map((u) => (u.uid === updated.uid ? updated : u)) } : d));
      setError(null);
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : t('operator.failed'));
    } finally {
      setBusy(null);
    }
  };

  if (!data && !error) return <Loader size="sm" />;
  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        {t('operator.intro')}
      </Text>
      {data &&
        (data.roots.length > 0 ? (
          <Text size="sm" data-testid="operator-roots">
            {t('operator.roots')}{' '}
            {data.roots.map((r) => (
              <Code key={r} mx={2}>
                {r}
              </Code>
            ))}
          </Text>
        ) : (
          <Alert color="yellow" variant="light" data-testid="operator-roots">
            {t('operator.noRoots')}
          </Alert>
        ))}
      {error && (
        <Alert color="red" data-testid="operator-error">
          {error}
        </Alert>
      )}
      {data && (
        <Table data-testid="operator-users" verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('operator.account')}</Table.Th>
              <Table.Th>{t('operator.localFolders')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {data.items.map((u) => (
              <Table.Tr key={u.uid} data-testid="operator-user">
                <Table.Td>
                  <Group gap={6}>
                    <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                      {u.email}
                    </Text>
                    {u.role === 'operator' && (
                      <Badge size="xs" variant="light" style={{ flexShrink: 0 }}>
                        {t('operator.operatorRole')}
                      </Badge>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>
                  {u.role === 'operator' ? (
                    <Text size="sm" c="dimmed">
                      {t('operator.allFolders')}
                    </Text>
                  ) : (
                    <Stack gap={2}>
                      <Switch
                        label={t('operator.mayUseLocal')}
                        checked={u.local_folder !== null}
                        disabled={busy === u.uid}
                        onChange={(e) => void toggle(u, e.currentTarget.checked)}
                      />
                      {u.local_roots.map((r) => (
                        <Text key={r} size="xs" c="dimmed">
                          <Code>{r}</Code>
                        </Text>
                      ))}
                    </Stack>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {data && data.total > PAGE_SIZE && (
        <Pagination total={Math.ceil(data.total / PAGE_SIZE)} value={page} onChange={setPage} size="sm" />
      )}
      <OperatorPlans />
    </Stack>
  );
}
