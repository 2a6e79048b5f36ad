import { Anchor, Breadcrumbs, Text } from '@mantine/core';
import { IconChevronRight } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { crumbs } from './model.ts';
import { Name } from '../../lib/Name.tsx';

/** The path bar: the cloud's root and every ancestor of the open folder, each a link to it. */
export function PathBar({
  path,
  rootLabel,
  onOpen,
}: {
  path: string;
  rootLabel: string;
  onOpen: (path: string) => void;
}) {
  const { t } = useTranslation('explorer');
  const list = crumbs(path);
  return (
    <nav aria-label={t('pathBar')}>
      <Breadcrumbs separator={<IconChevronRight size={14} aria-hidden />} separatorMargin={4} data-testid="path-bar">
        {list.map((c, i) =>
          i === list.length - 1 ? (
            <Text key={c.path} size="sm" fw={600} aria-current="location" truncate="end" maw={240}>
              <Name value={c.name || rootLabel} />
            </Text>
          ) : (
            <Anchor
              key={c.path}
              size="sm"
              component="button"
              type="button"
              onClick={() => onOpen(c.path)}
              truncate="end"
              maw={200}
            >
              <Name value={c.name || rootLabel} />
            </Anchor>
          ),
        )}
      </Breadcrumbs>
    </nav>
  );
}
