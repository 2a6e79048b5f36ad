import { createTheme, type CSSVariablesResolver, type MantineThemeOverride } from '@mantine/core';

/**
 * Colours are one shade darker than Mantine's default so that white text on filled buttons and
 * coloured text meet WCAG AA contrast (4.5:1).
 */
export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: 'md',
  fontFamily:
    'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans Arabic", "Noto Sans JP", "Noto Sans KR", sans-serif',
});

/**
 * The theme with the translated label of every dialog's close button (icon-only buttons need one);
 * on phones (`fullScreenDialogs`) every dialog fills the screen.
 */
export function localizedTheme(closeLabel: string, fullScreenDialogs = false): MantineThemeOverride {
  return {
    ...theme,
    // Plain objects, not Modal.extend(...) and the like: those would bring the dialogs' code into
    // the first page's chunk.
    components: {
      Modal: {
        defaultProps: {
          closeButtonProps: { 'aria-label': closeLabel },
          ...(fullScreenDialogs ? { fullScreen: true, radius: 0 } : {}),
        },
      },
      Drawer: { defaultProps: { closeButtonProps: { 'aria-label': closeLabel } } },
      // Toasts' close buttons too (Mantine's notifications render Notification).
      Notification: { defaultProps: { closeButtonProps: { 'aria-label': closeLabel } } },
    },
  };
}

/**
 * "Dimmed" text dark enough for 4.5:1 on white (Mantine's default grey is 3.3:1), and so is the
 * error text under a field (Mantine's default red.6 is 3.3:1; red.9 is 5.4:1).
 */
export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-error': 'var(--mantine-color-red-9)',
  },
  dark: {},
});
