import { Anchor, Button, Group, List, Modal, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConnectCloudDialog, FeedbackDialog, TransmissionListDialog } from '../../app/slots.tsx';
import { resetGuide } from '../guide/store.ts';
import { toast } from '../messages/toast.ts';
import { useSession } from '../session/store.ts';
import { closeShellDialog, openFeedback, openUserGuide, useShell } from './store.ts';
import { UpgradeDialog, useMandatoryUpgrade } from './UpgradeDialog.tsx';
import { supportApi } from '../support/api.ts';
import { ReleaseNotesView, UpdateWatcher } from '../support/WhatsNew.tsx';

/** The dialogs the header and the user panel open. */
export function ShellDialogs() {
  const s = useShell((x) => x);
  useMandatoryUpgrade();
  return (
    <>
      <TransmissionListDialog opened={s.transmissionOpen} onClose={() => closeShellDialog('transmissionOpen')} />
      <ConnectCloudDialog opened={s.connectOpen} kind={s.connectKind} onClose={() => closeShellDialog('connectOpen')} />
      <FeedbackDialog opened={s.feedbackOpen} onClose={() => closeShellDialog('feedbackOpen')} />
      <UserGuideDialog opened={s.guideOpen} onClose={() => closeShellDialog('guideOpen')} />
      <SupportDialog opened={s.supportOpen} onClose={() => closeShellDialog('supportOpen')} />
      <AboutDialog opened={s.aboutOpen} onClose={() => closeShellDialog('aboutOpen')} />
      <UpgradeDialog opened={s.upgradeOpen} onClose={() => closeShellDialog('upgradeOpen')} />
      <UpdateWatcher />
    </>
  );
}

const GUIDE_SECTIONS = ['clouds', 'transfer', 'sync', 'slim', 'apps', 'settings'] as const;

/** The user guide: what each area does, and a way to see the onboarding tips again. */
export function UserGuideDialog({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation('shell');
  return (
    <Modal opened={opened} onClose={onClose} title={t('guide.title')} size="lg" centered>
      <Stack gap="md">
        {GUIDE_SECTIONS.map((key) => (
          <Stack gap={2} key={key}>
            <Title order={3} size="h5">
              {t(`guide.sections.${key}.title`)}
            </Title>
            <Text size="sm">{t(`guide.sections.${key}.text`)}</Text>
          </Stack>
        ))}
        <Group justify="flex-end">
          <Button
            variant="light"
            onClick={() => {
              resetGuide();
              toast.info(t('guide.tipsReset'));
              onClose();
            }}
          >
            {t('guide.showTips')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** A link that closes the dialog it is in and opens the user guide. */
function GuideLink({ onClose, label }: { onClose: () => void; label: string }) {
  return (
    <Anchor
      component="button"
      type="button"
      size="sm"
      onClick={() => {
        onClose();
        openUserGuide();
      }}
    >
      {label}
    </Anchor>
  );
}

/** Support: the operator's contact link when configured, the user guide and the API reference. */
export function SupportDialog({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation('shell');
  const contact = useSession((s) => s.init?.service_notice?.contact_url ?? '');
  const desktop = useSession((s) => s.settings.runtime) !== 'web';
  return (
    <Modal opened={opened} onClose={onClose} title={t('support.title')} centered>
      <Stack gap="sm">
        {contact ? (
          <Text size="sm">
            {t('support.contactIntro')}{' '}
            <Anchor href={contact} target="_blank" rel="noopener noreferrer">
              {t('support.contactLink')}
            </Anchor>
          </Text>
        ) : (
          <Text size="sm">{t('support.noContact')}</Text>
        )}
        <List size="sm" spacing={4}>
          <List.Item>
            <GuideLink onClose={onClose} label={t('user.guide')} />
          </List.Item>
          <List.Item>
            <Anchor href="/api/docs" target="_blank" rel="noopener noreferrer" size="sm">
              {t('support.apiDocs')}
            </Anchor>
          </List.Item>
          {desktop && (
            <List.Item>
              <Anchor
                component="button"
                type="button"
                size="sm"
                onClick={() => {
                  onClose();
                  openFeedback();
                }}
              >
                {t('user.feedback')}
              </Anchor>
            </List.Item>
          )}
        </List>
      </Stack>
    </Modal>
  );
}

/** About (desktop client): version, blurb, links and the copyright year. */
export function AboutDialog({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation('shell');
  const { t: ts } = useTranslation('support');
  const [notes, setNotes] = useState<string | null>(null);
  const version = useSession((s) => s.settings.version);
  return (
    <Modal opened={opened} onClose={onClose} title={t('about.title')} centered>
      <Stack gap="xs" align="center">
        <img src="/favicon.svg" alt="" width={48} height={48} />
        <Title order={3} size="h4">
          {t('common:app.name')}
        </Title>
        <Text size="sm" c="dimmed" data-testid="about-version">
          {t('about.version', { version })}
        </Text>
        <Text size="sm" ta="center">
          {t('about.blurb')}
        </Text>
        <Group gap="md" justify="center">
          <GuideLink onClose={onClose} label={ts('about.guide')} />
          <Anchor href="/api/docs" target="_blank" rel="noopener noreferrer" size="sm">
            {t('support.apiDocs')}
          </Anchor>
          <Anchor
            component="button"
            type="button"
            size="sm"
            onClick={() => {
              supportApi
                .version('current')
                .then((d) => setNotes(d.whats_new_content))
                .catch(() => setNotes(''));
            }}
            data-testid="about-release-notes"
          >
            {ts('about.releaseNotes')}
          </Anchor>
        </Group>
        {notes && <ReleaseNotesView markdown={notes} />}
        <Text size="xs" c="dimmed" ta="center">
          {ts('about.privacy')}
        </Text>
        <Text size="xs" c="dimmed">
          {t('about.copyright', { year: new Date().getFullYear() })}
        </Text>
      </Stack>
    </Modal>
  );
}
