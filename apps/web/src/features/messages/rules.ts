import { INTERVALS } from '@skyferry/contract';

/** The local calendar day, YYYY-MM-DD. */
export function localDay(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** The banner box, once dismissed, stays hidden for the rest of that day. */
export function bannerVisible(closedOn: string | null, now: Date): boolean {
  return closedOn !== localDay(now);
}

/** The QR panel stays hidden for 24 hours after it is closed. */
export function qrPanelVisible(closedAt: number | null, now: number): boolean {
  return closedAt === null || now - closedAt >= INTERVALS.qrPanelHidden;
}

/** The questionnaire prompt shows until clicked once, and only when its data reward exists (billing on). */
export function questionnaireVisible(clicked: boolean, billingOn: boolean): boolean {
  return billingOn && !clicked;
}

/** A short, stable key for a notice's content, so a changed notice shows again after a close. */
export function noticeKey(text: string, date?: string | null): string {
  let h = 0;
  for (const ch of `${date ?? ''}|${text}`) h = (Math.imul(31, h) + (ch.codePointAt(0) ?? 0)) | 0;
  return String(h >>> 0);
}
