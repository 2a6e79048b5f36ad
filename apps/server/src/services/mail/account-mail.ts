import { isRtl, type Language } from '@skyferry/contract';
import { accountMailText, type AccountMailKey } from './account-catalogue.ts';
import { escapeHtml, type MailContent } from './transfer-finished.ts';

/** The account e-mails Skyferry sends. */
export type AccountMailKind =
  'password_reset' | 'email_confirm' | 'email_change_requested' | 'email_changed' | 'password_changed';

export interface AccountMailInput {
  kind: AccountMailKind;
  language: Language;
  /** The address the text names: the account's (reset, password changed) or the new one (e-mail change). */
  email: string;
  /** The single-use link (password reset, e-mail confirmation). */
  link?: string;
  /** The server's public address, named in the footer. */
  appUrl: string;
  /** How long the link works, in minutes (reset) or hours (confirmation). */
  minutes?: number;
  hours?: number;
}

const PARTS: Record<
  AccountMailKind,
  { subject: AccountMailKey; body: AccountMailKey; button?: AccountMailKey; after: AccountMailKey }
> = {
  password_reset: { subject: 'reset_subject', body: 'reset_body', button: 'reset_button', after: 'reset_ignore' },
  email_confirm: {
    subject: 'confirm_subject',
    body: 'confirm_body',
    button: 'confirm_button',
    after: 'confirm_ignore',
  },
  email_change_requested: {
    subject: 'change_requested_subject',
    body: 'change_requested_body',
    after: 'change_requested_warning',
  },
  email_changed: { subject: 'changed_subject', body: 'changed_body', after: 'changed_warning' },
  password_changed: {
    subject: 'password_changed_subject',
    body: 'password_changed_body',
    after: 'password_changed_warning',
  },
};

/** An account e-mail in the user's language: subject, plain text and HTML (with a button for a link). */
export function accountEmail(input: AccountMailInput): MailContent {
  const lang = input.language;
  const params = { email: input.email, minutes: input.minutes ?? 0, hours: input.hours ?? 0, url: input.appUrl };
  const t = (key: AccountMailKey) => accountMailText(lang, key, params);
  const part = PARTS[input.kind];
  const subject = t(part.subject).replace(/[\r\n]+/g, ' ');
  const link = part.button ? input.link : undefined;
  const text = [t(part.body), '', ...(link ? [link, ''] : []), t(part.after), '', '-- ', t('footer'), ''].join('\n');
  const dir = isRtl(lang) ? 'rtl' : 'ltr';
  const align = dir === 'rtl' ? 'right' : 'left';
  const button =
    link && part.button
      ? `<p style="margin:24px 0"><a href="${escapeHtml(link)}" style="background:#228be6;color:#ffffff;padding:10px 16px;border-radius:6px;text-decoration:none">${escapeHtml(t(part.button))}</a></p>
<p style="margin:0 0 16px;font-size:12px;color:#868e96">${escapeHtml(t('link_fallback'))}<br><span dir="ltr" style="word-break:break-all">${escapeHtml(link)}</span></p>`
      : '';
  const html = `<!doctype html>
<html lang="${lang === 'br' ? 'pt-BR' : lang}" dir="${dir}">
<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:24px;background:#f8f9fa;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#212529">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px;text-align:${align}">
<p style="font-size:16px;margin:0 0 8px">${escapeHtml(t(part.body))}</p>
${button}
<p style="margin:16px 0 0;color:#495057">${escapeHtml(t(part.after))}</p>
<p style="margin:24px 0 0;font-size:12px;color:#868e96">${escapeHtml(t('footer'))}</p>
</div>
</body>
</html>
`;
  return { subject, text, html };
}
