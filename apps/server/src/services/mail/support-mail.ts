import { isRtl, type Language } from '@skyferry/contract';
import { accountMailText } from './account-catalogue.ts';
import { escapeHtml, type MailContent } from './transfer-finished.ts';

/**
 * The support e-mails a sender receives: the acknowledgement of their ticket and the operator's
 * answer, in the sender's language. `{name}` placeholders are filled here. A test fails when a
 * language lacks a key, changes its placeholders, or keeps an English string.
 */
export const SUPPORT_MAIL_EN = {
  ack_subject: 'We received your message: {title}',
  ack_body:
    'Thank you for writing to the operator of the Skyferry server at {url}. The answer will come to this email address.',
  ack_copy: 'Your message:',
  reply_subject: 'Answer to your message: {title}',
  reply_body: 'The operator of the Skyferry server answered your message:',
  reply_after: 'When you are signed in, you also find the answer in Settings, under Support.',
} as const;

export type SupportMailKey = keyof typeof SUPPORT_MAIL_EN;
export type SupportMailStrings = Record<SupportMailKey, string>;

export const SUPPORT_MAIL_STRINGS: Record<Exclude<Language, 'en'>, SupportMailStrings> = {
  ar: {
    ack_subject: 'تلقّينا رسالتك: {title}',
    ack_body: 'شكرًا لمراسلتك مشغّل خادم Skyferry على {url}. سيصل الرد إلى عنوان البريد الإلكتروني هذا.',
    ack_copy: 'رسالتك:',
    reply_subject: 'رد على رسالتك: {title}',
    reply_body: 'ردّ مشغّل خادم Skyferry على رسالتك:',
    reply_after: 'عند تسجيل الدخول تجد الرد أيضًا في الإعدادات، ضمن الدعم.',
  },
  br: {
    ack_subject: 'Recebemos sua mensagem: {title}',
    ack_body:
      'Obrigado por escrever ao operador do servidor Skyferry em {url}. A resposta chegará a este endereço de e-mail.',
    ack_copy: 'Sua mensagem:',
    reply_subject: 'Resposta à sua mensagem: {title}',
    reply_body: 'O operador do servidor Skyferry respondeu à sua mensagem:',
    reply_after: 'Quando você estiver conectado, também encontra a resposta em Configurações, na seção Suporte.',
  },
  de: {
    ack_subject: 'Wir haben Ihre Nachricht erhalten: {title}',
    ack_body:
      'Danke für Ihre Nachricht an den Betreiber des Skyferry-Servers unter {url}. Die Antwort kommt an diese E-Mail-Adresse.',
    ack_copy: 'Ihre Nachricht:',
    reply_subject: 'Antwort auf Ihre Nachricht: {title}',
    reply_body: 'Der Betreiber des Skyferry-Servers hat auf Ihre Nachricht geantwortet:',
    reply_after: 'Angemeldet finden Sie die Antwort auch in den Einstellungen unter Support.',
  },
  es: {
    ack_subject: 'Hemos recibido tu mensaje: {title}',
    ack_body:
      'Gracias por escribir al operador del servidor Skyferry en {url}. La respuesta llegará a esta dirección de correo.',
    ack_copy: 'Tu mensaje:',
    reply_subject: 'Respuesta a tu mensaje: {title}',
    reply_body: 'El operador del servidor Skyferry ha respondido a tu mensaje:',
    reply_after: 'Con la sesión iniciada, también encontrarás la respuesta en Ajustes, en Soporte.',
  },
  fr: {
    ack_subject: 'Nous avons reçu votre message : {title}',
    ack_body:
      'Merci d’avoir écrit à l’opérateur du serveur Skyferry à l’adresse {url}. La réponse arrivera à cette adresse e-mail.',
    ack_copy: 'Votre message :',
    reply_subject: 'Réponse à votre message : {title}',
    reply_body: 'L’opérateur du serveur Skyferry a répondu à votre message :',
    reply_after: 'Une fois connecté, vous trouvez aussi la réponse dans les Paramètres, rubrique Assistance.',
  },
  it: {
    ack_subject: 'Abbiamo ricevuto il tuo messaggio: {title}',
    ack_body:
      'Grazie per aver scritto all’operatore del server Skyferry su {url}. La risposta arriverà a questo indirizzo email.',
    ack_copy: 'Il tuo messaggio:',
    reply_subject: 'Risposta al tuo messaggio: {title}',
    reply_body: 'L’operatore del server Skyferry ha risposto al tuo messaggio:',
    reply_after: 'Dopo l’accesso trovi la risposta anche nelle Impostazioni, alla voce Assistenza.',
  },
  ja: {
    ack_subject: 'メッセージを受け付けました: {title}',
    ack_body: '{url} の Skyferry サーバーの運営者へのご連絡ありがとうございます。回答はこのメールアドレスに届きます。',
    ack_copy: 'お送りいただいたメッセージ:',
    reply_subject: 'メッセージへの回答: {title}',
    reply_body: 'Skyferry サーバーの運営者からメッセージへの回答が届きました:',
    reply_after: 'サインインすると、設定の「サポート」でも回答を確認できます。',
  },
  ko: {
    ack_subject: '메시지를 받았습니다: {title}',
    ack_body: '{url}의 Skyferry 서버 운영자에게 연락해 주셔서 감사합니다. 답변은 이 이메일 주소로 전송됩니다.',
    ack_copy: '보내신 메시지:',
    reply_subject: '메시지에 대한 답변: {title}',
    reply_body: 'Skyferry 서버 운영자가 메시지에 답변했습니다:',
    reply_after: '로그인하면 설정의 지원 항목에서도 답변을 볼 수 있습니다.',
  },
  nl: {
    ack_subject: 'We hebben uw bericht ontvangen: {title}',
    ack_body:
      'Bedankt voor uw bericht aan de beheerder van de Skyferry-server op {url}. Het antwoord komt naar dit e-mailadres.',
    ack_copy: 'Uw bericht:',
    reply_subject: 'Antwoord op uw bericht: {title}',
    reply_body: 'De beheerder van de Skyferry-server heeft uw bericht beantwoord:',
    reply_after: 'Als u bent aangemeld, vindt u het antwoord ook in Instellingen, onder Ondersteuning.',
  },
};

function supportText(lang: Language, key: SupportMailKey, params: Record<string, string>): string {
  const template = lang === 'en' ? SUPPORT_MAIL_EN[key] : SUPPORT_MAIL_STRINGS[lang][key];
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => params[name] ?? whole);
}

/** A quoted block of the sender's or operator's plain text: escaped, line breaks kept. */
function quoted(text: string): string {
  return `<blockquote style="margin:16px 0;padding:8px 12px;border-inline-start:3px solid #ced4da;white-space:pre-wrap;color:#212529">${escapeHtml(text)}</blockquote>`;
}

function layout(lang: Language, subject: string, inner: string, footer: string): string {
  const dir = isRtl(lang) ? 'rtl' : 'ltr';
  return `<!doctype html>
<html lang="${lang === 'br' ? 'pt-BR' : lang}" dir="${dir}">
<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:24px;background:#f8f9fa;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#212529">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px;text-align:${dir === 'rtl' ? 'right' : 'left'}">
${inner}
<p style="margin:24px 0 0;font-size:12px;color:#868e96">${escapeHtml(footer)}</p>
</div>
</body>
</html>
`;
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ');

/**
 * A mail to a ticket's sender: a lead paragraph, the quoted text (theirs or the operator's) with an
 * optional line before it, and an optional line after it.
 */
function senderEmail(
  input: { language: Language; title: string; appUrl: string; quote: string },
  keys: { subject: SupportMailKey; lead: SupportMailKey; before?: SupportMailKey; after?: SupportMailKey },
): MailContent {
  const { language: lang } = input;
  const p = { title: oneLine(input.title), url: input.appUrl };
  const line = (key: SupportMailKey | undefined) => (key ? supportText(lang, key, p) : undefined);
  const subject = oneLine(supportText(lang, keys.subject, p));
  const footer = accountMailText(lang, 'footer', { url: input.appUrl });
  const [lead, before, after] = [line(keys.lead) ?? '', line(keys.before), line(keys.after)];
  const text = [
    lead,
    '',
    ...(before ? [before, ''] : []),
    input.quote,
    '',
    ...(after ? [after, ''] : []),
    '-- ',
    footer,
    '',
  ].join('\n');
  const note = (s: string | undefined) => (s ? `<p style="margin:16px 0 0;color:#495057">${escapeHtml(s)}</p>\n` : '');
  const inner = `<p style="font-size:16px;margin:0 0 8px">${escapeHtml(lead)}</p>
${note(before)}${quoted(input.quote)}
${note(after)}`;
  return { subject, text, html: layout(lang, subject, inner, footer) };
}

/** The acknowledgement a sender receives, quoting their message. */
export function ticketAckEmail(input: { language: Language; title: string; contents: string; appUrl: string }) {
  return senderEmail(
    { ...input, quote: input.contents },
    { subject: 'ack_subject', lead: 'ack_body', before: 'ack_copy' },
  );
}

/** The operator's answer, mailed to the ticket's sender. */
export function ticketReplyEmail(input: { language: Language; title: string; reply: string; appUrl: string }) {
  return senderEmail(
    { ...input, quote: input.reply },
    { subject: 'reply_subject', lead: 'reply_body', after: 'reply_after' },
  );
}

/**
 * The ticket as it reaches SUPPORT_EMAIL: who sent it and what they wrote, for the operator (in
 * English, as the server's logs are). Replying in the inbox keeps the answer on record.
 */
export function ticketToSupportEmail(input: {
  id: string;
  title: string;
  contents: string;
  email: string;
  name: string;
  sender: string;
  problemType: string | null;
  platform: string;
  version: string;
  language: string;
  inboxUrl: string;
}): MailContent & { replyTo: string } {
  const subject = oneLine(`[Skyferry support] ${input.title}`);
  const facts: Array<[string, string]> = [
    ['From', input.name ? `${input.name} <${input.email}>` : input.email],
    ['Sender', input.sender],
    ['Problem type', input.problemType ?? '-'],
    ['Platform', input.platform || '-'],
    ['Version', input.version || '-'],
    ['Language', input.language],
    ['Ticket', input.id],
  ];
  const text = [
    ...facts.map(([k, v]) => `${k}: ${oneLine(v)}`),
    '',
    input.contents,
    '',
    `-- `,
    `Answer from the operator inbox: ${input.inboxUrl}`,
    '',
  ].join('\n');
  const rows = facts
    .map(
      ([k, v]) =>
        `<tr><td style="padding:2px 12px 2px 0;color:#868e96">${escapeHtml(k)}</td><td>${escapeHtml(v)}</td></tr>`,
    )
    .join('\n');
  const html = layout(
    'en',
    subject,
    `<table style="font-size:14px;border-collapse:collapse">${rows}</table>
${quoted(input.contents)}
<p style="margin:16px 0 0"><a href="${escapeHtml(input.inboxUrl)}">Answer from the operator inbox</a></p>`,
    'Sent by Skyferry.',
  );
  return { subject, text, html, replyTo: input.email };
}
