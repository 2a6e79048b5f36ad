import { Alert, Button, Radio, Slider, Stack, Text, Textarea, Title } from '@mantine/core';
import { QUESTIONNAIRE_REWARD_BYTES, SURVEY_CHOICES, formatBytes, type SurveyState } from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { refreshMe } from '../session/actions.ts';
import { selectLoggedIn, useSession } from '../session/store.ts';
import { openLogin } from '../auth/login.ts';
import { billingApi } from './api.ts';

type FoundBy = (typeof SURVEY_CHOICES.found_by)[number];
type MainUse = (typeof SURVEY_CHOICES.main_use)[number];

/** The questionnaire the prompt opens: its completion grants 30 GB of data, once per account. */
export function SurveyPage() {
  const { t } = useTranslation('buy');
  const loggedIn = useSession(selectLoggedIn);
  const [state, setState] = useState<SurveyState | null>(null);
  const [foundBy, setFoundBy] = useState<FoundBy | null>(null);
  const [mainUse, setMainUse] = useState<MainUse | null>(null);
  const [recommend, setRecommend] = useState(8);
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [thanks, setThanks] = useState(false);
  const size = formatBytes(QUESTIONNAIRE_REWARD_BYTES).replace('.00 ', '');

  useEffect(() => {
    if (loggedIn)
      billingApi
        .survey()
        .then(setState)
        .catch(() => undefined);
  }, [loggedIn]);

  const submit = async () => {
    if (!foundBy || !mainUse) return;
    setBusy(true);
    try {
      setState(
        await billingApi.answerSurvey({
          found_by: foundBy,
          main_use: mainUse,
          recommend,
          ...(comment.trim() ? { comment: comment.trim() } : {}),
        }),
      );
      setThanks(true);
      await refreshMe().catch(() => undefined);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Stack maw={560} mx="auto" p="md" gap="md" data-testid="survey">
      <Title order={2}>{t('survey.title')}</Title>
      {!loggedIn ? (
        <Button w="fit-content" onClick={() => void openLogin()}>
          {t('loginFirst')}
        </Button>
      ) : thanks ? (
        <Alert color="teal" data-testid="survey-thanks">
          {t('survey.thanks', { size })}
        </Alert>
      ) : state?.answered ? (
        <Alert color="blue">{t('survey.answered')}</Alert>
      ) : (
        <>
          <Text>{t('survey.intro', { size })}</Text>
          <Radio.Group label={t('survey.foundBy')} value={foundBy} onChange={(v) => setFoundBy(v as FoundBy)}>
            <Stack gap={6} mt={6}>
              {SURVEY_CHOICES.found_by.map((c) => (
                <Radio key={c} value={c} label={t(`survey.foundByOptions.${c}`)} />
              ))}
            </Stack>
          </Radio.Group>
          <Radio.Group label={t('survey.mainUse')} value={mainUse} onChange={(v) => setMainUse(v as MainUse)}>
            <Stack gap={6} mt={6}>
              {SURVEY_CHOICES.main_use.map((c) => (
                <Radio key={c} value={c} label={t(`survey.mainUseOptions.${c}`)} />
              ))}
            </Stack>
          </Radio.Group>
          <Stack gap={4}>
            <Text size="sm" fw={500}>
              {t('survey.recommend')}
            </Text>
            <Slider
              min={0}
              max={10}
              step={1}
              value={recommend}
              onChange={setRecommend}
              marks={[{ value: 0 }, { value: 10 }]}
            />
          </Stack>
          <Textarea
            label={t('survey.comment')}
            value={comment}
            onChange={(e) => setComment(e.currentTarget.value)}
            maxLength={2000}
          />
          <Button
            w="fit-content"
            onClick={() => void submit()}
            loading={busy}
            disabled={!foundBy || !mainUse}
            data-testid="survey-submit"
          >
            {t('survey.submit')}
          </Button>
        </>
      )}
    </Stack>
  );
}
