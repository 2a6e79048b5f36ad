import { describe, expect, it } from 'vitest';
import { bidiMark, hasBidiControls, message, nameParts, plainName, revealBidiControls } from './index.ts';

const RLO = '\u202E';
const FSI = '\u2068';
const PDI = '\u2069';
/** Every control the rule covers. */
const CONTROLS = [
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u202E',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200E',
  '\u200F',
  '\u061C',
];

describe('bidirectional-text controls in names', () => {
  it('shows every control as a visible mark with its code point', () => {
    expect(revealBidiControls(`invoice${RLO}gpj.exe`)).toBe('invoice[U+202E]gpj.exe');
    for (const c of CONTROLS) {
      expect(hasBidiControls(`a${c}b`)).toBe(true);
      expect(revealBidiControls(`a${c}b`)).toBe(`a${bidiMark(c)}b`);
    }
    expect(bidiMark('\u061C')).toBe('[U+061C]');
    expect(hasBidiControls('plain name.txt')).toBe(false);
    expect(hasBidiControls('تقرير.pdf')).toBe(false);
  });

  it('isolates names in plain text when they hold controls or right-to-left letters, and leaves others alone', () => {
    expect(plainName(`invoice${RLO}gpj.exe`)).toBe(`${FSI}invoice[U+202E]gpj.exe${PDI}`);
    expect(plainName('تقرير (1).pdf')).toBe(`${FSI}تقرير (1).pdf${PDI}`);
    expect(plainName('Holiday photos')).toBe('Holiday photos');
    // A second pass changes nothing, and a hand-made isolate holding a control is not trusted.
    const once = plainName(`a${RLO}b`);
    expect(plainName(once)).toBe(once);
    expect(plainName(`${FSI}a${RLO}b${PDI}`)).toBe(`${FSI}[U+2068]a[U+202E]b[U+2069]${PDI}`);
  });

  it('cuts a name into text and marks for rich rendering', () => {
    expect(nameParts(`in${RLO}gpj.exe`)).toEqual([
      { text: 'in' },
      { text: '[U+202E]', control: RLO },
      { text: 'gpj.exe' },
    ]);
    expect(nameParts('')).toEqual([{ text: '' }]);
    // A message that holds a name made plain keeps that isolate; a control outside it is a mark.
    const msg = `Copy ${plainName(`a${RLO}b`)} here${RLO}`;
    expect(nameParts(msg)).toEqual([{ text: `Copy ${FSI}a[U+202E]b${PDI} here` }, { text: '[U+202E]', control: RLO }]);
    expect(revealBidiControls(msg)).toBe(`Copy ${FSI}a[U+202E]b${PDI} here[U+202E]`);
    expect(nameParts(plainName(`x${RLO}`))).toEqual([{ text: 'x[U+202E]' }]);
  });

  it('server messages show names with their controls as marks', () => {
    expect(message('en', 'insufficient_space', { cloud_name: `Backup${RLO}fdp.exe` })).toBe(
      `Insufficient space on ${FSI}Backup[U+202E]fdp.exe${PDI}!`,
    );
  });
});
