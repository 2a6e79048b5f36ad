import { describe, expect, it } from 'vitest';
import { ENCODINGS, NameEncoder, type EncodeRule } from './encoding.ts';

describe('NameEncoder', () => {
  it('replaces forbidden characters with look-alikes and decodes them back', () => {
    const enc = new NameEncoder(ENCODINGS.onedrive);
    expect(enc.encode('a:b*c?.')).toBe('a：b＊c？．');
    expect(enc.encode(' lead and trail ')).toBe('␠lead and trail␠');
    expect(enc.encode('~tilde#%')).toBe('～tilde＃％');
    expect(enc.encode('tab\there')).toBe('tab␉here');
    expect(enc.decode('a：b＊c？．')).toBe('a:b*c?.');
    expect(enc.encode('.')).toBe('．');
    expect(enc.encode('..')).toBe('．．');
  });

  it('leaves allowed characters alone and only encodes positional ones at the edges', () => {
    const enc = new NameEncoder(['rightSpace', 'rightPeriod', 'leftSpace']);
    expect(enc.encode('a b.c')).toBe('a b.c');
    expect(enc.encode('file.')).toBe('file．');
    expect(enc.encode('ünïcødé 文件')).toBe('ünïcødé 文件');
  });

  it('quotes look-alikes already present so decoding is exact', () => {
    const enc = new NameEncoder(ENCODINGS.windows);
    const raw = 'already：fullwidth and real:colon';
    const encoded = enc.encode(raw);
    expect(encoded).toBe('already‛：fullwidth and real：colon');
    expect(enc.decode(encoded)).toBe(raw);
    for (const tricky of ['‛', '‛‛', '‛：', '‛:', 'a‛', '‛a', '：‛', '‛‛：:']) {
      expect(enc.decode(enc.encode(tricky))).toBe(tricky);
    }
  });

  it('round-trips random names for every preset', () => {
    const alphabet = [...'ab .~:/\\*?"<>|#%$\'\t\r\n\x01\x7f‛：．␠＊／～', 'é', '文'];
    let seed = 42;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const [preset, rules] of Object.entries(ENCODINGS)) {
      const enc = new NameEncoder(rules as EncodeRule[]);
      for (let n = 0; n < 500; n++) {
        const len = 1 + Math.floor(rand() * 8);
        let name = '';
        for (let i = 0; i < len; i++) name += alphabet[Math.floor(rand() * alphabet.length)];
        if (name.includes('/') && rules.includes('slash') === false) continue;
        const encoded = enc.encode(name);
        expect(enc.decode(encoded), `${preset}: ${JSON.stringify(name)} -> ${JSON.stringify(encoded)}`).toBe(name);
      }
    }
  });

  it('encoded names contain none of the characters a rule forbids', () => {
    const enc = new NameEncoder(['win', 'ctl', 'backslash']);
    const encoded = enc.encode('a<b>c:d"e|f?g*h\\i\x01j');
    for (const ch of '<>:"|?*\\\x01') expect(encoded).not.toContain(ch);
  });

  it('a service allowing "/" in names maps it into a Skyferry path segment and back', () => {
    const slash = new NameEncoder(['slash']);
    const skyferryName = slash.encode('2024/05 report');
    expect(skyferryName).toBe('2024／05 report');
    expect(slash.decode(skyferryName)).toBe('2024/05 report');
    expect(slash.encodePath('/a/b')).toBe('/a/b');
  });
});
