import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { i18n } from '../i18n/index.ts';
import { SPOOFED, shownBidiMarks } from '../test/utils.tsx';
import { Name } from './Name.tsx';

describe('a name a user chose, on the page', () => {
  it('is isolated in <bdi>, with each bidi control shown as a mark instead of reversing it', () => {
    const { container } = render(
      <p>
        Delete <Name value={SPOOFED.file} /> and <Name value={'\u202Bwrapped\u202C \u200F\u061C'} />?
      </p>,
    );
    const [first, second] = container.querySelectorAll('bdi');
    expect(first?.textContent).toBe('invoice[U+202E]gpj.exe');
    expect(second?.textContent).toBe('[U+202B]wrapped[U+202C] [U+200F][U+061C]');
    expect(shownBidiMarks(container)).toEqual(['[U+202E]', '[U+202B]', '[U+202C]', '[U+200F]', '[U+061C]']);
    expect(screen.getByText('gpj.exe', { exact: false }).tagName).toBe('BDI');
  });

  it('shows a name without controls as it is', () => {
    const { container } = render(<Name value="Holiday photos" />);
    expect(container.innerHTML).toBe('<bdi class="sf-name">Holiday photos</bdi>');
  });

  it('in translated text (toasts, prompts, labels) every value is made plain: marks, and isolated', () => {
    expect(i18n.t('explorer:deleteOne', { name: SPOOFED.file })).toContain(
      'Delete "\u2068invoice[U+202E]gpj.exe\u2069"?',
    );
    expect(i18n.t('explorer:deleteOne', { name: 'a.txt' })).toContain('Delete "a.txt"?');
    // The text of a translation that holds a name made plain keeps that isolate (no marks for it).
    const { container } = render(<Name value={i18n.t('explorer:deleteOne', { name: SPOOFED.file })} />);
    expect(shownBidiMarks(container)).toEqual([]);
    expect(container.textContent).toContain('Delete "\u2068invoice[U+202E]gpj.exe\u2069"?');
  });
});
