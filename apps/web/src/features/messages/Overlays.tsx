import { Alert, Anchor, Button, Text } from '@mantine/core';
import { IconGift, IconSpeakerphone } from '@tabler/icons-react';
import { QUESTIONNAIRE_REWARD_BYTES, formatBytes } from '@skyferry/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { STORAGE_KEYS, readJson, writeJson } from '../../lib/storage.ts';
import { selectBillingOn, useSession } from '../session/store.ts';
import { openFeedback } from '../shell/store.ts';
import { bannerVisible, localDay, noticeKey, questionnaireVisible } from './rules.ts';

/** The banner box whose contact-support link opens the Feedback dialog; dismissed, it returns the next day. */
export function BannerBox() {
  const { t } = useTranslation('messages');
  const [visible, setVisible] = useState(() =>
    bannerVisible(readJson<string | null>(STORAGE_KEYS.bannerClosedOn, null), new Date()),
  );
  if (!visible) return null;
  const close = () => {
    writeJson(STORAGE_KEYS.bannerClosedOn, localDay(new Date()));
    setVisible(false);
  };
  return (
    <Alert
      variant="light"
      color="blue"
      icon={<IconSpeakerphone size={18} aria-hidden />}
      withCloseButton
      closeButtonLabel={t('banner.close')}
      onClose={close}
      mb="md"
      data-testid="banner-box"
    >
      <Text size="sm" span>
        {t('banner.text')}{' '}
      </Text>
      <Anchor component="button" type="button" size="sm" onClick={openFeedback} fw={600}>
        {t('banner.contact')}
      </Anchor>
    </Alert>
  );
}

/** The questionnaire prompt offering 30GB of free data; not shown again once clicked. */
export function QuestionnairePrompt() {
  const { t } = useTranslation('messages');
  const billingOn = useSession(selectBillingOn);
  const navigate = useNavigate();
  const [clicked, setClicked] = useState(() => readJson<boolean>(STORAGE_KEYS.questionnaireClicked, false));
  if (!questionnaireVisible(clicked, billingOn)) return null;
  const click = () => {
    writeJson(STORAGE_KEYS.questionnaireClicked, true);
    setClicked(true);
    // The questionnaire page: answering it grants the reward once per account.
    navigate('/survey');
  };
  return (
    <Button
      variant="light"
      color="grape"
      size="xs"
      leftSection={<IconGift size={16} aria-hidden />}
      onClick={click}
      data-testid="questionnaire"
    >
      {t('questionnaire.offer', { size: formatBytes(QUESTIONNAIRE_REWARD_BYTES).replace('.00 ', '') })}
    </Button>
  );
}

/** The operator's service notice (off unless configured): text, date, contact link, close. */
export function ServiceNoticeBox() {
  const { t } = useTranslation('messages');
  const notice = useSession((s) => s.init?.service_notice ?? null);
  const [closed, setClosed] = useState(() => readJson<string | null>(STORAGE_KEYS.serviceNoticeClosed, null));
  if (!notice || !notice.text) return null;
  const key = noticeKey(notice.text, notice.date);
  if (closed === key) return null;
  return (
    <Alert
      color="red"
      variant="light"
      title={notice.date ? t('notice.titleDated', { date: notice.date }) : t('notice.title')}
      withCloseButton
      closeButtonLabel={t('notice.close')}
      onClose={() => {
        writeJson(STORAGE_KEYS.serviceNoticeClosed, key);
        setClosed(key);
      }}
      mb="md"
      data-testid="service-notice"
    >
      <Text size="sm" style={{ whiteSpace: 'pre-line' }}>
        {notice.text}
      </Text>
      {notice.contact_url && (
        <Anchor href={notice.contact_url} target="_blank" rel="noopener noreferrer" size="sm" fw={600}>
          {t('notice.contact')}
        </Anchor>
      )}
    </Alert>
  );
}
