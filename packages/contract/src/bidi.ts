/**
 * Bidirectional-text controls in user-supplied names (file, folder, cloud and task names). They
 * change the order the text around them is shown in: "invoice\u202Egpj.exe" shows as
 * "invoiceexe.jpg". Every place a name is shown uses these helpers: each control becomes a visible
 * mark ("[U+202E]"), and the name is kept from reordering the text around it (an HTML <bdi>, or in
 * plain text the isolate characters FSI ... PDI).
 */

/** Embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069), and the marks LRM, RLM and ALM. */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;
/** Letters written right to left (Hebrew, Arabic, Syriac, Thaana, NKo and others, and their presentation forms). */
const RTL_LETTERS = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
const FSI = '\u2068';
const PDI = '\u2069';
/** A control, or an isolate made by `plainName` (FSI, text without controls, PDI), which is kept as it is. */
const CONTROL_OR_CLEAN_ISOLATE =
  /\u2068[^\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*\u2069|[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/** True when the text holds a bidirectional-text control. */
export function hasBidiControls(text: string): boolean {
  return new RegExp(BIDI_CONTROLS.source, 'u').test(text);
}

/** The visible mark that stands for a control: its code point in brackets, "[U+202E]". */
export function bidiMark(control: string): string {
  return `[U+${(control.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}]`;
}

/** The name inside an isolate this module made (FSI, text without controls, PDI), or the text itself. */
function unwrap(text: string): string {
  if (text.length >= 2 && text.startsWith(FSI) && text.endsWith(PDI)) {
    const inner = text.slice(1, -1);
    if (!hasBidiControls(inner)) return inner;
  }
  return text;
}

/** A piece of a name: plain text, or a control and the mark shown in its place. */
export type NamePart = { text: string; control?: undefined } | { text: string; control: string };

/** A name cut into its text and its bidi controls (each with its mark), to show the controls as marks. */
export function nameParts(name: string): NamePart[] {
  const text = unwrap(name);
  const parts: NamePart[] = [];
  let last = 0;
  let plain = '';
  for (const match of text.matchAll(CONTROL_OR_CLEAN_ISOLATE)) {
    plain += text.slice(last, match.index);
    last = match.index + match[0].length;
    // A text that holds names already made plain (a translated message) keeps their isolates.
    if (match[0].length > 1) {
      plain += match[0];
      continue;
    }
    if (plain) parts.push({ text: plain });
    plain = '';
    parts.push({ text: bidiMark(match[0]), control: match[0] });
  }
  plain += text.slice(last);
  if (plain || parts.length === 0) parts.push({ text: plain });
  return parts;
}

/** The name with each bidi control replaced by its visible mark (isolates `plainName` made stay). */
export function revealBidiControls(name: string): string {
  return nameParts(name)
    .map((p) => p.text)
    .join('');
}

/**
 * A user-supplied name for plain text (page titles, messages, e-mails, labels): its bidi controls
 * shown as marks and, when it holds right-to-left letters or controls, isolated (FSI ... PDI) so it
 * cannot reorder the text around it. A name without either is returned as it is; applying it twice
 * changes nothing.
 */
export function plainName(name: string): string {
  if (unwrap(name) !== name) return name;
  if (!RTL_LETTERS.test(name) && !hasBidiControls(name)) return name;
  return `${FSI}${revealBidiControls(name)}${PDI}`;
}
