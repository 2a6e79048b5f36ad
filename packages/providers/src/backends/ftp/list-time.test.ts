import { describe, expect, it } from 'vitest';
import { ftpTime, parseFacts, parseListTime, parseMlsdTime } from './ftp.ts';

describe('parseListTime (LIST dates of servers without MLSD)', () => {
  const now = new Date('2026-06-15T12:00:00Z');

  it('reads recent Unix dates with a time, in this year or the last', () => {
    expect(parseListTime('Mar 04 05:06', now)?.toISOString()).toBe('2026-03-04T05:06:00.000Z');
    // A date after tomorrow cannot be in this year's past half-year: it is last year's.
    expect(parseListTime('Dec 24 18:30', now)?.toISOString()).toBe('2025-12-24T18:30:00.000Z');
  });

  it('reads older Unix dates with a year', () => {
    expect(parseListTime('Jan  2  2020', now)?.toISOString()).toBe('2020-01-02T00:00:00.000Z');
  });

  it('reads DOS dates with and without AM/PM', () => {
    expect(parseListTime('03-04-21 05:06PM', now)?.toISOString()).toBe('2021-03-04T17:06:00.000Z');
    expect(parseListTime('03-04-21 12:06AM', now)?.toISOString()).toBe('2021-03-04T00:06:00.000Z');
    expect(parseListTime('11-30-1999 23:59', now)?.toISOString()).toBe('1999-11-30T23:59:00.000Z');
  });

  it('gives up on anything else', () => {
    expect(parseListTime('yesterday', now)).toBeUndefined();
    expect(parseListTime('Foo 04 05:06', now)).toBeUndefined();
    expect(parseListTime(undefined, now)).toBeUndefined();
  });
});

describe('MLST facts and FTP times (servers with MLSD/MLST and MFMT)', () => {
  it('parses a fact line, keeping spaces in the name', () => {
    const parsed = parseFacts('type=file;size=1234;modify=20210304050607.123;UNIX.mode=0644; a name with spaces.txt');
    expect(parsed?.name).toBe('a name with spaces.txt');
    expect(parsed?.facts.get('type')).toBe('file');
    expect(parsed?.facts.get('size')).toBe('1234');
    expect(parsed?.facts.get('unix.mode')).toBe('0644');
    expect(parseFacts('no-facts-here')).toBeUndefined();
  });

  it('reads MLSD modify times as UTC, with optional milliseconds', () => {
    expect(parseMlsdTime('20210304050607')?.toISOString()).toBe('2021-03-04T05:06:07.000Z');
    expect(parseMlsdTime('20210304050607.5')?.toISOString()).toBe('2021-03-04T05:06:07.500Z');
    expect(parseMlsdTime('2021-03-04')).toBeUndefined();
  });

  it('writes MFMT/MDTM times as YYYYMMDDHHMMSS in UTC', () => {
    expect(ftpTime(new Date('2020-01-02T03:04:05.678Z'))).toBe('20200102030405');
  });
});
