import { notifications } from '@mantine/notifications';
import { INTERVALS } from '@skyferry/contract';

export type ToastKind = 'success' | 'error' | 'info' | 'warning';

const COLOURS: Record<ToastKind, string> = { success: 'teal', error: 'red', info: 'blue', warning: 'yellow' };

/** A short message that closes itself after 3 s. */
export function showToast(message: string, kind: ToastKind = 'info'): string {
  return notifications.show({
    message,
    color: COLOURS[kind],
    autoClose: INTERVALS.toast,
    withCloseButton: true,
  });
}

export const toast = {
  success: (message: string) => showToast(message, 'success'),
  error: (message: string) => showToast(message, 'error'),
  info: (message: string) => showToast(message, 'info'),
  warning: (message: string) => showToast(message, 'warning'),
};
