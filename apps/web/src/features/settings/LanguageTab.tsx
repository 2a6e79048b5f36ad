import { Radio, Stack } from '@mantine/core';
import { LANGUAGES, LANGUAGE_NAMES, toLanguage, type Language } from '@skyferry/contract';
import { useTranslation } from 'react-i18next';
import { setLanguage } from '../../i18n/index.ts';
import { loadSystemClouds } from '../session/actions.ts';

/** Language: a radio list of the ten languages; the choice is kept under the `Language` key. */
export function LanguageTab() {
  const { t, i18n } = useTranslation('settings');
  const current = toLanguage(i18n.language) ?? 'en';
  return (
    <Radio.Group
      value={current}
      onChange={(value) =>
        // The server words some lists in the language too (why a cloud kind is unavailable).
        void setLanguage(value as Language).then(() => loadSystemClouds().catch(() => undefined))
      }
      label={t('language.label')}
      description={t('language.description')}
    >
      <Stack gap="xs" mt="sm">
        {LANGUAGES.map((lang) => (
          <Radio key={lang} value={lang} label={LANGUAGE_NAMES[lang]} lang={lang === 'br' ? 'pt-BR' : lang} />
        ))}
      </Stack>
    </Radio.Group>
  );
}
