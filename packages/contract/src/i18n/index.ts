import { plainName } from '../bidi.ts';
import type { Language } from '../languages.ts';
import { ar } from './ar.ts';
import { br } from './br.ts';
import { de } from './de.ts';
import { en, type MessageKey, type Messages } from './en.ts';
import { es } from './es.ts';
import { fr } from './fr.ts';
import { it } from './it.ts';
import { ja } from './ja.ts';
import { ko } from './ko.ts';
import { nl } from './nl.ts';

export type { MessageKey, Messages };

export const MESSAGES: Record<Language, Messages> = { en, ar, br, de, es, fr, it, ja, ko, nl };

/** A server message in the user's language, with `{name}` placeholders filled. */
export function message(lang: Language, key: MessageKey, params: Record<string, string | number> = {}): string {
  const template = MESSAGES[lang]?.[key] ?? en[key];
  // Values may be names users chose: shown with their bidi controls as marks, isolated.
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? plainName(String(params[name])) : whole,
  );
}
