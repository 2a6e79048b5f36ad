import { LANGUAGES } from '@skyferry/contract';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { i18n, initialLanguage, setLanguage } from './index.ts';

afterEach(async () => {
  vi.restoreAllMocks();
  localStorage.clear();
  await setLanguage('en');
});

describe('interface language', () => {
  it('is the stored choice first, then the browser’s language (pt maps to br), then English', () => {
    const languages = vi.spyOn(navigator, 'languages', 'get');
    languages.mockReturnValue(['pt-PT', 'de']);
    expect(initialLanguage()).toBe('br');
    localStorage.setItem('Language', 'ko');
    expect(initialLanguage()).toBe('ko');
    localStorage.clear();
    languages.mockReturnValue(['sv-SE', 'fi']);
    expect(initialLanguage()).toBe('en');
  });

  it('switching keeps the choice under "Language" and lays Arabic out right to left', async () => {
    await setLanguage('ar');
    expect(localStorage.getItem('Language')).toBe('ar');
    expect(i18n.language).toBe('ar');
    expect(document.documentElement.dir).toBe('rtl');
    expect(document.documentElement.lang).toBe('ar');
    expect(i18n.t('shell:user.logout')).toBe('تسجيل الخروج');
    await setLanguage('br');
    expect(document.documentElement.dir).toBe('ltr');
    expect(document.documentElement.lang).toBe('pt-BR');
    expect(i18n.t('shell:user.logout')).toBe('Sair');
  });
});

describe('translations load by language', () => {
  it('each language is one chunk holding all its namespaces, the same as its files', async () => {
    const { resources } = await import('./resources.ts');
    const { loadLanguage } = await import('./load.ts');
    for (const lang of LANGUAGES) expect(await loadLanguage(lang), lang).toEqual(resources[lang]);
  });
});
