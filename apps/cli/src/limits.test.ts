import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from './io.ts';
import { Bandwidth, BwTimetable, parseDuration, parseSize } from './limits.ts';
import { runIn } from './run.testing.ts';

let dir: string;
const cli = (...argv: string[]) => runIn(dir, undefined, argv);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skyferry-cli-limits-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("rclone's sizes, durations and bandwidth timetables", () => {
  it.each([
    ['512', 512 * 1024],
    ['512K', 512 * 1024],
    ['10M', 10 * 1024 ** 2],
    ['1.5G', 1.5 * 1024 ** 3],
    ['100B', 100],
    ['2MiB', 2 * 1024 ** 2],
    ['1T', 1024 ** 4],
  ])('size %s is %d bytes', (text, bytes) => expect(parseSize(text, 'x')).toBe(bytes));

  it.each(['', '10X', 'M', '-1M', '1 M M'])('size %j is refused', (text) => {
    expect(() => parseSize(text, 'max-transfer')).toThrow(/--max-transfer: .* is not a size/);
  });

  it.each([
    ['10', 10_000],
    ['500ms', 500],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['0', 0],
  ])('duration %s is %d ms', (text, ms) => expect(parseDuration(text, 'stats')).toBe(ms));

  it.each(['', '1d', '10s5', 'fast'])('duration %j is refused', (text) => {
    expect(() => parseDuration(text, 'stats')).toThrow(/--stats: .* is not a duration/);
  });

  // rclone's documented timetable example, with days and up:down pairs.
  const table = new BwTimetable('08:00,512K 12:00,10M 13:00,512K 18:00,30M 23:00,off; Sat-10:00,1M:2M');
  const at = (day: string, time: string) => table.at(new Date(`${day}T${time}:00`));
  it.each([
    ['2026-11-23', '07:59', 0], // Monday before 08:00: Sunday's 23:00 "off"
    ['2026-11-23', '08:00', 512 * 1024],
    ['2026-11-23', '12:30', 10 * 1024 ** 2],
    ['2026-11-23', '13:00', 512 * 1024],
    ['2026-11-23', '22:59', 30 * 1024 ** 2],
    ['2026-11-23', '23:00', 0],
    ['2026-11-28', '10:00', 1024 ** 2],
    ['2026-11-28', '11:59', 1024 ** 2],
    ['2026-11-28', '12:00', 10 * 1024 ** 2],
  ])('on %s at %s the upload limit is %d', (day, time, up) => expect(at(day, time).up).toBe(up));

  it('up:down pairs limit each way; a single bandwidth both', () => {
    expect(at('2026-11-28', '10:30')).toEqual({ up: 1024 ** 2, down: 2 * 1024 ** 2 });
    expect(new BwTimetable('10M').at(new Date())).toEqual({ up: 10 * 1024 ** 2, down: 10 * 1024 ** 2 });
    expect(new BwTimetable('off').at(new Date())).toEqual({ up: 0, down: 0 });
  });

  it.each(['08:00,bad', 'Mon-25:00,1M', 'Xyz-10:00,1M', '10:00,', '1M:2M:3M', 'off 1M'])(
    'timetable %j is refused',
    (text) => {
      expect(() => new BwTimetable(text)).toThrow(/--bwlimit/);
    },
  );

  it('a bucket lets the bytes of a second through in a second, whatever the chunks', async () => {
    const bw = new Bandwidth(new BwTimetable('100K'));
    const started = Date.now();
    // 200 KiB at 100 KiB/s in pieces from two streams at once: about 2 s (a quarter second of burst at most).
    await Promise.all(
      [0, 1].map(async () => {
        for (let i = 0; i < 10; i++) await bw.take('down', 10 * 1024);
      }),
    );
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1700);
    expect(took).toBeLessThan(3000);
  });
});

describe('transfer limits on the command line', () => {
  beforeEach(async () => {
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src', 'big.bin'), Buffer.alloc(600 * 1024, 3));
    await writeFile(join(dir, 'src', 'small.txt'), 'small');
  });

  it("--bwlimit holds a copy to the bandwidth (this machine's disk included)", async () => {
    const started = Date.now();
    const r = await cli('copy', 'src', 'dst', '--bwlimit', '300K', '--quiet');
    expect(r.code, r.err).toBe(EXIT.ok);
    // 600 KiB at 300 KiB/s: about 2 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1700);
    expect((await stat(join(dir, 'dst', 'src', 'big.bin'))).size).toBe(600 * 1024);
  });

  it('--max-transfer starts no file that would pass it and says so (exit 1)', async () => {
    const r = await cli('copy', 'src', 'dst', '--max-transfer', '100K', '--quiet');
    expect(r.code).toBe(EXIT.failed);
    expect(r.out).toMatch(/^traffic_exceeded: /);
    expect(r.err).toContain('Stopped at --max-transfer');
    expect(await readdir(join(dir, 'dst', 'src')).catch(() => [])).not.toContain('big.bin');
    // Within the limit, everything.
    expect((await cli('copy', 'src', 'dst', '--max-transfer', '1M', '--quiet')).code).toBe(EXIT.ok);
  });

  it('--checksum updates a file of the same size and time whose content differs; without it, it is skipped', async () => {
    await cli('copy', 'src', 'dst', '--quiet');
    const copy = join(dir, 'dst', 'src', 'small.txt');
    await writeFile(copy, 'SMALL');
    const when = new Date('2024-05-01T10:00:00Z');
    await utimes(join(dir, 'src', 'small.txt'), when, when);
    await utimes(copy, when, when);
    expect((await cli('copy', 'src', 'dst', '--quiet')).out).toMatch(/0 updated/);
    expect(await readFile(copy, 'utf8')).toBe('SMALL');
    const r = await cli('copy', 'src', 'dst', '--checksum', '--quiet');
    expect(r.out).toMatch(/1 updated, .* 1 unchanged/);
    expect(await readFile(copy, 'utf8')).toBe('small');
  });

  it('--log-file gets a time-stamped line for each file, and what stopped a run', async () => {
    await writeFile(join(dir, 'dst'), 'a file where a folder is expected');
    const r = await cli('copy', 'src', 'dst', '--log-file', 'logs/run.log', '--stats', '0');
    expect(r.code).toBe(EXIT.failed);
    const log = await readFile(join(dir, 'logs', 'run.log'), 'utf8');
    expect(log).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z skyferry: not_dir: /m);
    expect((await stat(join(dir, 'logs', 'run.log'))).mode & 0o777).toBe(0o600);
    const ok = await cli('copy', 'src', 'ok', '--log-file', 'logs/run.log');
    expect(ok.code).toBe(EXIT.ok);
    expect(ok.err).toBe('');
    const after = await readFile(join(dir, 'logs', 'run.log'), 'utf8');
    expect(after.startsWith(log)).toBe(true);
    expect(after).toMatch(/Z copy ok\/src\/big\.bin \(600\.00 KB\)\n/);
    expect(after).toMatch(/Z copy ok\/src\/small\.txt \(5 B\)\n/);
  });

  it('refuses the limits where they mean nothing', async () => {
    expect((await cli('check', 'src', 'src', '--bwlimit', '1M')).err).toMatch(/--bwlimit does not apply to check/);
    expect((await cli('copy', 'src', 'dst', '--bwlimit', 'fast')).code).toBe(EXIT.usage);
    expect((await cli('bisync', 'src', 'dst', '--checksum')).err).toMatch(/--checksum does not apply to bisync/);
    expect((await cli('copy', 'src', 'dst', '--stats', 'often')).err).toMatch(/--stats: "often" is not a duration/);
  });
});
