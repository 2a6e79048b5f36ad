import { Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** A screen whose feature has not been built yet: shows its title only. */
export function PlaceholderPage({ titleKey }: { titleKey: string }) {
  const { t } = useTranslation();
  return <Title order={2}>{t(titleKey)}</Title>;
}
