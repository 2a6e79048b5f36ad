import {
  Alert,
  Badge,
  Box,
  Button,
  Card,
  Group,
  Progress,
  SimpleGrid,
  Stack,
  Text,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { IconCloudPlus } from '@tabler/icons-react';
import { LIMITS, formatBytes, usageColour } from '@skyferry/contract';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { selectLoggedIn, selectVisibleClouds, useSession } from '../session/store.ts';
import type { Cloud, SystemCloud, UserInfo } from '../session/types.ts';
import { CloudIcon } from '../shell/CloudIcon.tsx';
import { availableFirst, cloudHref, cloudLabel, kindName, markCloudUsed, recentClouds } from '../shell/clouds.ts';
import { openConnectCloud } from '../shell/store.ts';
import classes from './Home.module.css';
import { Name } from '../../lib/Name.tsx';

/** The name the greeting uses: nickname, first name, or the e-mail's local part. */
export function displayName(info: UserInfo | null, email: string): string {
  if (info?.nickname) return info.nickname;
  if (info?.firstname) return info.firstname;
  const mail = info?.email || email;
  return mail ? (mail.split('@')[0] ?? mail) : '';
}

/** The recently used clouds, newest first, among those still connected. */
export function recentlyUsed(clouds: Cloud[], limit = 4): Array<{ cloud: Cloud; index: number }> {
  const byId = new Map(clouds.map((c, index) => [c.id, { cloud: c, index }]));
  return recentClouds()
    .map((r) => byId.get(r.id))
    .filter((x): x is { cloud: Cloud; index: number } => x !== undefined)
    .slice(0, limit);
}

/** The kinds not connected yet (available ones first). */
export function unusedKinds(kinds: SystemCloud[], clouds: Cloud[]): SystemCloud[] {
  const used = new Set(clouds.map((c) => c.cloud_name));
  return availableFirst(kinds.filter((k) => !used.has(k.cloud_name)));
}

/**
 * Home, the /manage overview (DECISIONS): a greeting, recently used clouds, add cloud, and the cloud
 * drives in use and not yet used. The cloud management issue embeds it above its per-cloud tools.
 */
export function Home() {
  const { t } = useTranslation('home');
  const navigate = useNavigate();
  const loggedIn = useSession(selectLoggedIn);
  const info = useSession((s) => s.user.info);
  const email = useSession((s) => s.user.email);
  const clouds = useSession(selectVisibleClouds);
  const kinds = useSession((s) => s.systemClouds);
  const recent = useMemo(() => recentlyUsed(clouds), [clouds]);
  const unused = useMemo(() => unusedKinds(kinds, clouds), [kinds, clouds]);
  const name = loggedIn ? displayName(info, email) : '';
  const open = (cloud: Cloud, index: number) => {
    markCloudUsed(cloud.id);
    navigate(cloudHref(cloud, index));
  };
  return (
    <Stack gap="xl" data-testid="home">
      <Group justify="space-between" align="flex-end">
        <Box>
          <Title order={2}>{name ? t('greeting', { name }) : t('greetingVisitor')}</Title>
          <Text c="dimmed" size="sm">
            {t('subtitle')}
          </Text>
        </Box>
        <Button leftSection={<IconCloudPlus size={18} aria-hidden />} onClick={() => openConnectCloud()}>
          {t('addCloud')}
        </Button>
      </Group>
      {clouds.length >= LIMITS.cloudWarningFrom && (
        <Alert color={clouds.length >= LIMITS.maxCloudDrives ? 'red' : 'blue'} variant="light">
          {clouds.length >= LIMITS.maxCloudDrives
            ? t('limitReached')
            : t('limitNear', { n: clouds.length, max: LIMITS.maxCloudDrives })}
        </Alert>
      )}
      <Stack gap="sm" component="section" aria-labelledby="home-recent">
        <Title order={3} size="h4" id="home-recent">
          {t('recent')}
        </Title>
        {recent.length === 0 ? (
          <Text size="sm" c="dimmed">
            {t('recentEmpty')}
          </Text>
        ) : (
          <SimpleGrid cols={{ base: 2, md: 4 }} spacing="sm">
            {recent.map(({ cloud, index }) => (
              <UnstyledButton key={cloud.id} className={classes.tile} onClick={() => open(cloud, index)}>
                <Group gap="xs" wrap="nowrap">
                  <CloudIcon kind={cloud.cloud_name} size={24} />
                  <Box style={{ minWidth: 0 }}>
                    <Text size="sm" fw={500} truncate="end">
                      <Name value={cloudLabel(cloud)} />
                    </Text>
                    <Text size="xs" c="dimmed" truncate="end">
                      {kindName(cloud.cloud_name)}
                    </Text>
                  </Box>
                </Group>
              </UnstyledButton>
            ))}
          </SimpleGrid>
        )}
      </Stack>
      <Stack gap="sm" component="section" aria-labelledby="home-used">
        <Group gap="xs">
          <Title order={3} size="h4" id="home-used">
            {t('used')}
          </Title>
          <Badge variant="light">{t('usedCount', { n: clouds.length, max: LIMITS.maxCloudDrives })}</Badge>
        </Group>
        {clouds.length === 0 ? (
          <Card withBorder padding="lg" className={classes.empty}>
            <Stack align="center" gap="xs">
              <Text size="sm">{t('usedEmpty')}</Text>
              <Button variant="light" onClick={() => openConnectCloud()}>
                {t('addCloud')}
              </Button>
            </Stack>
          </Card>
        ) : (
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="sm">
            {clouds.map((cloud, index) => (
              <UsedCloudCard key={cloud.id} cloud={cloud} onOpen={() => open(cloud, index)} />
            ))}
          </SimpleGrid>
        )}
      </Stack>
      <Stack gap="sm" component="section" aria-labelledby="home-unused">
        <Title order={3} size="h4" id="home-unused">
          {t('unused')}
        </Title>
        <SimpleGrid cols={{ base: 2, sm: 3, lg: 4 }} spacing="sm">
          {unused.map((kind) => (
            <UnstyledButton
              key={kind.cloud_name}
              className={classes.tile}
              onClick={() => openConnectCloud(kind.cloud_name)}
              disabled={!kind.available}
              aria-disabled={!kind.available || undefined}
              title={kind.available ? undefined : (kind.reason ?? undefined)}
              data-unavailable={!kind.available || undefined}
            >
              <Group gap="xs" wrap="nowrap">
                <CloudIcon kind={kind.cloud_name} size={22} />
                <Box style={{ minWidth: 0 }}>
                  <Text size="sm" truncate="end">
                    {kindName(kind.cloud_name, kind.display_name)}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {kind.available ? t('connect') : t('unavailable')}
                  </Text>
                </Box>
              </Group>
            </UnstyledButton>
          ))}
        </SimpleGrid>
      </Stack>
    </Stack>
  );
}

function UsedCloudCard({ cloud, onOpen }: { cloud: Cloud; onOpen: () => void }) {
  const { t } = useTranslation('home');
  const total = cloud.space ?? 0;
  const used = cloud.used_space ?? 0;
  const colour = usageColour(used, total);
  return (
    <UnstyledButton className={classes.tile} onClick={onOpen}>
      <Stack gap={6}>
        <Group gap="xs" wrap="nowrap">
          <CloudIcon kind={cloud.cloud_name} size={24} />
          <Box style={{ minWidth: 0 }}>
            <Text size="sm" fw={500} truncate="end">
              <Name value={cloudLabel(cloud)} />
            </Text>
            <Text size="xs" c="dimmed" truncate="end">
              {kindName(cloud.cloud_name)} · <Name value={cloud.cloud_account} />
            </Text>
          </Box>
        </Group>
        {total > 0 ? (
          <>
            <Progress
              value={Math.min(100, (used / total) * 100)}
              color={colour === 'danger' ? 'red' : colour === 'warn' ? 'orange' : 'blue'}
              size="sm"
              aria-label={t('space', { used: formatBytes(used), total: formatBytes(total) })}
            />
            <Text size="xs" c="dimmed">
              {t('space', { used: formatBytes(used), total: formatBytes(total) })}
            </Text>
          </>
        ) : (
          <Text size="xs" c="dimmed">
            {t('spaceUnknown')}
          </Text>
        )}
      </Stack>
    </UnstyledButton>
  );
}
