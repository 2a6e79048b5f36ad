import { Modal } from '@mantine/core';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { SURVEY_LOAD_TIMEOUT_MS, finishCloseSurvey, useCloseSurvey } from './close-survey.ts';

/**
 * The survey on client close (ST-SURV): the questionnaire page in a frame, shown only once it has
 * loaded (the dialog stays hidden, its frame loading, until then); if it has not loaded within 5 s
 * it is given up and the window closes. Closing the dialog closes the window.
 */
export function CloseSurvey() {
  const { t } = useTranslation('buy');
  const open = useCloseSurvey((s) => s.open);
  const [loaded, setLoaded] = useState(false);

  useEffect(() => {
    setLoaded(false);
    if (!open) return;
    let done = false;
    const timer = setTimeout(() => {
      if (!done) finishCloseSurvey();
    }, SURVEY_LOAD_TIMEOUT_MS);
    const onLoaded = () => {
      done = true;
    };
    window.addEventListener('skyferry:close-survey-loaded', onLoaded);
    return () => {
      clearTimeout(timer);
      window.removeEventListener('skyferry:close-survey-loaded', onLoaded);
    };
  }, [open]);

  if (!open) return null;
  return (
    <Modal opened={loaded} onClose={finishCloseSurvey} title={t('survey.title')} size="lg" keepMounted>
      <iframe
        src="/survey"
        title={t('survey.title')}
        onLoad={() => {
          window.dispatchEvent(new Event('skyferry:close-survey-loaded'));
          setLoaded(true);
        }}
        data-testid="close-survey-frame"
        style={{ width: '100%', height: '60vh', border: 0 }}
      />
    </Modal>
  );
}
