/**
 * The Mantine components whose styles load with the page (vite.plugins.ts, mantineStyles): those
 * the shell shows before anything else has loaded (header, menu, sidebar, notices, loaders, the
 * error page) and its hover tips. A test checks the shell uses no other component's styles.
 */
export const FIRST_PAINT_COMPONENTS = [
  'baseline',
  'default-css-variables',
  'global',
  'ActionIcon',
  'Alert',
  'Anchor',
  'AppShell',
  'Badge',
  'Burger',
  'Button',
  'Center',
  'CloseButton',
  'Group',
  'Loader',
  'NavLink',
  'Paper',
  'Popover',
  'ScrollArea',
  'Stack',
  'Text',
  'Title',
  'Tooltip',
  'UnstyledButton',
  'VisuallyHidden',
] as const;
