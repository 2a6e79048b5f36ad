import { Box, Drawer, useDirection } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Sidebar } from '../../features/shell/Sidebar.tsx';

/** Small screens: the sidebar as a drawer from the header's menu button. */
export function NavDrawer({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation('shell');
  // From the side the sidebar is on (the right in Arabic).
  const { dir } = useDirection();
  return (
    <Drawer
      opened={opened}
      onClose={onClose}
      position={dir === 'rtl' ? 'right' : 'left'}
      size={280}
      padding="xs"
      title={t('common:app.name')}
      id="nav-drawer"
    >
      <Box component="nav" aria-label={t('nav.label')} h="calc(100dvh - 80px)">
        <Sidebar narrow={false} />
      </Box>
    </Drawer>
  );
}
