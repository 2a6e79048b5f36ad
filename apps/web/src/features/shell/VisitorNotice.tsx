import { Alert, Badge, Button, Group, Text, Tooltip, UnstyledButton, VisuallyHidden } from '@mantine/core';
import { IconUserQuestion } from '@tabler/icons-react';
import { LIMITS } from '@skyferry/contract';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { openLogin } from '../auth/login.ts';
import { selectLoggedIn, useSession } from '../session/store.ts';

/**
 * The header's sign for visitors: they are not signed in, and the cloud drives they connect are
 * temporary. A click opens the sign-in; signed-in users see nothing.
 */
export function VisitorBadge() {
  const { t } = useTranslation('shell');
  const loggedIn = useSession(selectLoggedIn);
  const explainedId = useId();
  if (loggedIn) return null;
  const explained = t('visitor.temporary', { count: LIMITS.tempCloudExpiryDays });
  return (
    <>
      <Tooltip label={explained} multiline w={260}>
        <UnstyledButton onClick={() => void openLogin()} aria-describedby={explainedId} data-testid="visitor-badge">
          <Badge
            variant="light"
            color="yellow"
            c="dark.7"
            size="lg"
            radius="sm"
            leftSection={<IconUserQuestion size={14} aria-hidden />}
            style={{ cursor: 'pointer', textTransform: 'none' }}
          >
            {t('visitor.badge')}
          </Badge>
        </UnstyledButton>
      </Tooltip>
      <VisuallyHidden id={explainedId}>{explained}</VisuallyHidden>
    </>
  );
}

/** The user panel's explanation for visitors, with the ways to keep their clouds. */
export function VisitorNotice({ onAction }: { onAction?: () => void }) {
  const { t } = useTranslation('shell');
  const go = (signUp: boolean) => {
    onAction?.();
    void openLogin({ signUp });
  };
  return (
    <Alert variant="light" color="yellow" p="xs" data-testid="visitor-notice">
      <Text size="sm" fw={600} c="dark.7">
        {t('visitor.badge')}
      </Text>
      <Text size="xs" mt={2} c="dark.7">
        {t('visitor.temporary', { count: LIMITS.tempCloudExpiryDays })}
      </Text>
      <Group gap="xs" mt="xs">
        <Button size="compact-xs" onClick={() => go(true)}>
          {t('visitor.signUp')}
        </Button>
        <Button size="compact-xs" variant="default" onClick={() => go(false)}>
          {t('visitor.logIn')}
        </Button>
      </Group>
    </Alert>
  );
}
