import {
  formatBytes,
  formatDateTime,
  isRtl,
  nameParts,
  plainName,
  TaskType,
  type Language,
  type TaskOutcome,
} from '@skyferry/contract';
import { mailText, type MailKey } from './catalogue.ts';

/** What the e-mail sent when a transfer ends tells. */
export interface TransferSummary {
  taskName: string;
  /** 0 migrate, otherwise sync. */
  taskType: number;
  outcome: TaskOutcome;
  /** ms since the epoch. */
  startedAt: number;
  endedAt: number;
  /** The source cloud as the user knows it ("Google Drive (ann@example.com)") and the chosen paths. */
  from: { cloud: string; paths: readonly string[] };
  to: { cloud: string; path: string };
  added: number;
  updated: number;
  deleted: number;
  failed: number;
  bytesMoved: number;
  /** Two-way conflicts resolved, and the first few of them by name (with the other version's). */
  conflicts?: number;
  conflictNames?: ReadonlyArray<{ path: string; other: string | null }>;
  /** The first few files deleted (of `deleted`). */
  deletedNames?: readonly string[];
  /** Files a stopped run did not get to. */
  notDone?: number;
  /** The run's page in the web app (the link of the e-mail); the app itself without it. */
  runUrl?: string;
}

export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

export interface MailLocale {
  language: Language;
  /** IANA zone the times are shown in. */
  timeZone: string;
  /** Where the user opens Skyferry. */
  appUrl: string;
}

const LOCALES: Record<Language, string> = {
  en: 'en',
  ar: 'ar',
  br: 'pt-BR',
  de: 'de',
  es: 'es',
  fr: 'fr',
  it: 'it',
  ja: 'ja',
  ko: 'ko',
  nl: 'nl',
};

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A duration as hours, minutes and seconds in the language ("1 h 2 min 3 s"). */
export function formatDuration(ms: number, language: Language): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return mailText(language, 'duration_hms', { h, m, s });
  if (m > 0) return mailText(language, 'duration_ms', { m, s });
  return mailText(language, 'duration_s', { s });
}

/** A row's value: text of the e-mail's own, and names users chose (tasks, clouds, paths). */
type Piece = string | { name: string };

/** A piece as plain text: a name with its bidi controls shown as marks, isolated when it needs to be. */
function textOf(pieces: readonly Piece[]): string {
  return pieces.map((p) => (typeof p === 'string' ? p : plainName(p.name))).join('');
}

/** A piece as HTML: a name in <bdi>, its bidi controls shown as red marks. */
function htmlOf(pieces: readonly Piece[]): string {
  return pieces
    .map((p) => {
      if (typeof p === 'string') return escapeHtml(p);
      const inner = nameParts(p.name)
        .map((part) =>
          part.control
            ? `<span style="color:#e03131;font-family:monospace">${escapeHtml(part.text)}</span>`
            : escapeHtml(part.text),
        )
        .join('');
      return `<bdi>${inner}</bdi>`;
    })
    .join('');
}

/** The pieces of a list of names with `separator` between them. */
function names(list: readonly string[], separator: string): Piece[] {
  return list.flatMap((name, i) => (i === 0 ? [{ name }] : [separator, { name }]));
}

const RESULT_KEY: Record<TaskOutcome, MailKey> = {
  success: 'result_success',
  partial: 'result_partial',
  failed: 'result_failed',
  canceled: 'result_canceled',
};

/** The transfer-finished e-mail in the user's language: subject, plain text and HTML. */
export function transferFinishedEmail(summary: TransferSummary, locale: MailLocale): MailContent {
  const lang = locale.language;
  const t = (key: MailKey, params: Record<string, string | number> = {}) => mailText(lang, key, params);
  const number = new Intl.NumberFormat(LOCALES[lang]);
  const when = (ms: number) => `${formatDateTime(ms, locale.timeZone)} (${locale.timeZone})`;
  const result = t(RESULT_KEY[summary.outcome]);
  const rows: Array<[MailKey, Piece[]]> = [
    ['label_task', [{ name: summary.taskName }]],
    ['label_type', [t(summary.taskType === TaskType.migrate ? 'type_migrate' : 'type_sync')]],
    ['label_result', [result]],
    ['label_start', [when(summary.startedAt)]],
    ['label_end', [when(summary.endedAt)]],
    ['label_duration', [formatDuration(summary.endedAt - summary.startedAt, lang)]],
    ['label_from', [{ name: summary.from.cloud }, ' ', ...names(summary.from.paths, ', ')]],
    ['label_to', [{ name: summary.to.cloud }, ' ', { name: summary.to.path }]],
    ['label_added', [number.format(summary.added)]],
    ['label_updated', [number.format(summary.updated)]],
    ['label_deleted', [number.format(summary.deleted)]],
    ['label_failed', [number.format(summary.failed)]],
    ['label_moved', [formatBytes(summary.bytesMoved)]],
  ];
  const conflicts = summary.conflicts ?? 0;
  const notDone = summary.notDone ?? 0;
  if (conflicts > 0) rows.splice(rows.length - 2, 0, ['label_conflicts', [number.format(conflicts)]]);
  if (notDone > 0) rows.splice(rows.length - 1, 0, ['label_not_done', [number.format(notDone)]]);
  // The conflicts and deletions by name (the first few; the run's page lists them all).
  const lists: Array<{ title: string; lines: string[] }> = [];
  const more = (total: number, shown: number) => (total > shown ? [t('and_more', { count: total - shown })] : []);
  const conflictNames = summary.conflictNames ?? [];
  if (conflicts > 0 && conflictNames.length > 0) {
    const lines = conflictNames.map((c) =>
      c.other ? t('conflict_line', { path: plainName(c.path), other: plainName(c.other) }) : plainName(c.path),
    );
    lists.push({ title: t('conflicts_title'), lines: [...lines, ...more(conflicts, conflictNames.length)] });
  }
  const deletedNames = summary.deletedNames ?? [];
  if (summary.deleted > 0 && deletedNames.length > 0) {
    lists.push({
      title: t('deletions_title'),
      lines: [...deletedNames.map((n) => plainName(n)), ...more(summary.deleted, deletedNames.length)],
    });
  }
  const link = summary.runUrl ?? locale.appUrl;
  const linkLabel = summary.runUrl ? t('open_run') : t('open_link');
  const taskName = plainName(summary.taskName);
  const subject = t('subject', { result, name: taskName }).replace(/[\r\n]+/g, ' ');
  const intro = t('intro', { name: taskName });
  const hint = summary.failed > 0 ? t('failed_hint') : notDone > 0 ? t('not_done_hint') : undefined;

  const text = [
    intro,
    '',
    ...rows.map(([key, value]) => `${t(key)}: ${textOf(value)}`),
    '',
    ...lists.flatMap((l) => [`${l.title}:`, ...l.lines.map((line) => `  ${line}`), '']),
    ...(hint ? [hint, ''] : []),
    `${linkLabel}: ${link}`,
    '',
    '-- ',
    t('footer'),
    '',
  ].join('\n');

  const dir = isRtl(lang) ? 'rtl' : 'ltr';
  const align = dir === 'rtl' ? 'right' : 'left';
  const colour = { success: '#2f9e44', partial: '#e67700', failed: '#e03131', canceled: '#868e96' }[summary.outcome];
  const cell = `padding:6px 12px;border-bottom:1px solid #e9ecef;text-align:${align};vertical-align:top`;
  const tableRows = rows
    .map(([key, value]) => {
      const shown =
        key === 'label_result' ? `<strong style="color:${colour}">${htmlOf(value)}</strong>` : htmlOf(value);
      return `<tr><th style="${cell};color:#495057;font-weight:600;white-space:nowrap">${escapeHtml(t(key))}</th><td style="${cell}">${shown}</td></tr>`;
    })
    .join('\n');
  const html = `<!doctype html>
<html lang="${lang === 'br' ? 'pt-BR' : lang}" dir="${dir}">
<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:24px;background:#f8f9fa;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#212529">
<div style="max-width:640px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px;text-align:${align}">
<p style="font-size:16px;margin:0 0 16px">${escapeHtml(intro)}</p>
<table style="border-collapse:collapse;width:100%;font-size:14px">
${tableRows}
</table>
${lists
  .map(
    (l) =>
      `<p style="margin:16px 0 4px;font-weight:600">${escapeHtml(l.title)}</p>\n<ul style="margin:0;padding-${align}:20px;font-size:13px">${l.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>`,
  )
  .join('\n')}
${hint ? `<p style="margin:16px 0 0;color:#e03131">${escapeHtml(hint)}</p>` : ''}
<p style="margin:24px 0 0"><a href="${escapeHtml(link)}" style="background:#228be6;color:#ffffff;padding:10px 16px;border-radius:6px;text-decoration:none">${escapeHtml(linkLabel)}</a></p>
<p style="margin:24px 0 0;font-size:12px;color:#868e96">${escapeHtml(t('footer'))}</p>
</div>
</body>
</html>
`;
  return { subject, text, html };
}
