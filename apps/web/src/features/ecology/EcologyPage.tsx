import { Alert, Badge, Button, Card, Group, Loader, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { EcologyApp } from '@skyferry/contract';
import { IconApps } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router';
import { ecologyApi } from './api.ts';
import { appCatalog } from './catalog.ts';
import { openApp } from './tabs.ts';

/** A first-party app's name and description in the interface language; an external one's as registered. */
export function useAppText() {
  const { t } = useTranslation('apps');
  return {
    name: (app: EcologyApp) => (app.first_party ? t(`builtIn.${app.app_id}.name`) : app.name),
    description: (app: EcologyApp) => (app.first_party ? t(`builtIn.${app.app_id}.description`) : app.description),
  };
}

function AppIcon({ app }: { app: EcologyApp }) {
  return app.icon ? (
    <img src={app.icon} alt="" width={36} height={36} />
  ) : (
    <IconApps size={36} aria-hidden color="var(--mantine-color-blue-6)" />
  );
}

function AppCard({ app, extra }: { app: EcologyApp; extra?: React.ReactNode }) {
  const { t } = useTranslation('apps');
  const text = useAppText();
  return (
    <Card withBorder padding="md" data-testid="app-card" data-app-id={app.app_id}>
      <Group wrap="nowrap" align="flex-start">
        <AppIcon app={app} />
        <Stack gap={4} style={{ minWidth: 0, flex: 1 }}>
          <Group gap="xs">
            <Text fw={600}>{text.name(app)}</Text>
            <Badge size="xs" variant="light" color={app.first_party ? 'blue' : 'grape'}>
              {app.first_party ? t('firstParty') : t('external')}
            </Badge>
          </Group>
          <Text size="sm" c="dimmed" lineClamp={2}>
            {text.description(app)}
          </Text>
          {extra}
          <Group gap="xs" mt={4}>
            <Button size="xs" onClick={() => openApp({ ...app, name: text.name(app) })}>
              {t('open')}
            </Button>
            <Button size="xs" variant="default" component={Link} to={`/ecology/detail?app_id=${app.app_id}`}>
              {t('details')}
            </Button>
          </Group>
        </Stack>
      </Group>
    </Card>
  );
}

function useLoad<T>(load: () => Promise<T>): { data?: T; error?: string } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data }),
      (err: unknown) => live && setState({ error: err instanceof Error ? err.message : String(err) }),
    );
    return () => {
      live = false;
    };
    // The loader is fixed for the page's life.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return state;
}

function Loading({ error }: { error?: string }) {
  const { t } = useTranslation('apps');
  return error ? (
    <Alert color="red">{error}</Alert>
  ) : (
    <Group>
      <Loader size="sm" />
      <Text c="dimmed">{t('loading')}</Text>
    </Group>
  );
}

/** /ecology: the registry's apps. */
export function EcologyPage() {
  const { t } = useTranslation('apps');
  const { data, error } = useLoad(appCatalog);
  return (
    <Stack>
      <Title order={2}>{t('title')}</Title>
      <Text c="dimmed">{t('intro')}</Text>
      {!data ? (
        <Loading error={error} />
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} data-testid="app-list">
          {data.map((app) => (
            <AppCard key={app.app_id} app={app} />
          ))}
        </SimpleGrid>
      )}
    </Stack>
  );
}

/** /ecology/detail?app_id=N: one app, its functions and the file types each opens. */
export function EcologyDetailPage() {
  const { t } = useTranslation('apps');
  const text = useAppText();
  const location = useLocation();
  const appId = Number(new URLSearchParams(location.search).get('app_id'));
  const { data, error } = useLoad(() =>
    Number.isInteger(appId) && appId > 0 ? ecologyApi.get(appId) : Promise.reject(new Error(t('notFound'))),
  );
  return (
    <Stack>
      <Button variant="subtle" component={Link} to="/ecology" w="fit-content" px={0}>
        {t('back')}
      </Button>
      <Title order={2}>{data ? text.name(data) : t('common:page.ecologyDetail')}</Title>
      {!data ? (
        <Loading error={error} />
      ) : (
        <>
          <AppCard app={data} />
          <Title order={3}>{t('functions')}</Title>
          <Stack gap="xs" data-testid="app-functions">
            {data.functions.map((fn) => (
              <Card key={fn.id} withBorder padding="sm">
                <Text fw={500}>{data.first_party ? t(`action.${fn.action}`) : fn.name}</Text>
                <Text size="sm" c="dimmed">
                  {t('accepts', { types: fn.extensions.join(', ') || t('anyFile') })}
                </Text>
              </Card>
            ))}
          </Stack>
          {data.is_mandatory_login && <Text size="sm">{t('loginRequired')}</Text>}
          {!data.first_party && (
            <Text size="sm" c="dimmed">
              {t('origin', { origin: data.origin, name: text.name(data) })}
            </Text>
          )}
        </>
      )}
    </Stack>
  );
}

/** /myapp: the apps the user opened, most recently used first. */
export function MyAppsPage() {
  const { t, i18n } = useTranslation('apps');
  const { data, error } = useLoad(() => ecologyApi.mine());
  return (
    <Stack>
      <Title order={2}>{t('myApps')}</Title>
      {!data ? (
        <Loading error={error} />
      ) : data.items.length === 0 ? (
        <Text c="dimmed" data-testid="my-apps-empty">
          {t('myAppsEmpty')} <Link to="/ecology">{t('browse')}</Link>
        </Text>
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} data-testid="my-apps">
          {data.items.map((app) => (
            <AppCard
              key={app.app_id}
              app={app}
              extra={
                <Text size="xs" c="dimmed">
                  {t('lastUsed', { date: new Date(app.last_used_at).toLocaleDateString(i18n.language) })}
                </Text>
              }
            />
          ))}
        </SimpleGrid>
      )}
    </Stack>
  );
}
