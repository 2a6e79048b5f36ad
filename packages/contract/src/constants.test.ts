import { describe, expect, it } from 'vitest';
import {
  BUFFERS,
  CLEANUP_IMODE_DEFAULT,
  DATA_PACKETS,
  DEFAULT_PRICES,
  DISCONTINUATION_NOTICE_DATE,
  EMBEDDED_HOST,
  FRONT_END_VERSION,
  GB,
  INTERVALS,
  LARGE_FILE_THRESHOLD_DEFAULT,
  LICENSES,
  LIMITS,
  MB,
  PAGE_SIZES,
  PLATFORM,
  PRICING_PERIODS,
  PRODUCT_ID,
  QUESTIONNAIRE_REWARD_BYTES,
  REFUND_DAYS,
  STORAGE_BAR,
  SUPPORT_CHANNEL,
  TASK_NAME_TRUNCATION,
  TIMEOUTS,
  TIP,
  USAGE_COLOUR,
} from './index.ts';

// Each expectation is the value of spec section 9's table (or of DECISIONS where it decides one).

describe('units', () => {
  it('uses base 1024', () => {
    expect(MB).toBe(1_048_576);
    expect(GB).toBe(1_073_741_824);
  });
});

describe('limits', () => {
  it('free accounts authorise 5 cloud drives, anyone at most 20, with the warning from 18', () => {
    expect(LIMITS.freeCloudDrives).toBe(5);
    expect(LIMITS.maxCloudDrives).toBe(20);
    expect(LIMITS.cloudWarningFrom).toBe(18);
    expect(LIMITS.cloudWarningFrom).toBeLessThan(LIMITS.maxCloudDrives);
  });
  it('binds up to 5 temporary clouds on login', () => {
    expect(LIMITS.tempCloudsBoundOnLogin).toBe(5);
  });
  it('opens at most 15 third-party apps', () => {
    expect(LIMITS.openApps).toBe(15);
  });
  it('restores deleted cloud files within 30 days', () => {
    expect(LIMITS.restoreDeletedDays).toBe(30);
  });
  it('shows a free user one clean-up page of 20 results', () => {
    expect(LIMITS.freeCleanupResults).toBe(20);
    expect(LIMITS.freeCleanupResults).toBe(PAGE_SIZES.cleanup);
  });
  it('keeps unused temporary clouds for 30 days (issue 3)', () => {
    expect(LIMITS.tempCloudExpiryDays).toBe(30);
  });
});

describe('money and promises', () => {
  it('promises a 7-day full refund', () => {
    expect(REFUND_DAYS).toBe(7);
  });
  it('rewards the questionnaire with 30 GB', () => {
    expect(QUESTIONNAIRE_REWARD_BYTES).toBe(30 * 1024 ** 3);
  });
  it('keeps the discontinuation notice date of 24 July 2024', () => {
    expect(DISCONTINUATION_NOTICE_DATE).toBe('2024-07-24');
  });
  it('uses support channel 3', () => {
    expect(SUPPORT_CHANNEL).toBe(3);
  });
  it('sells 1 month (150G), 1 quarter (200G) and 1 year (400G) licences', () => {
    expect(LICENSES.map((l) => [l.name, l.months, l.monthlyAllowance, l.period])).toEqual([
      ['1 Month', 1, 150 * 1024 ** 3, 'monthly'],
      ['1 Quarter', 3, 200 * 1024 ** 3, 'quarterly'],
      ['1 Year', 12, 400 * 1024 ** 3, 'yearly'],
    ]);
    expect(new Set(LICENSES.map((l) => l.id)).size).toBe(3);
  });
  it('sells 50G and 100G data packets', () => {
    expect(DATA_PACKETS.map((p) => [p.name, p.size])).toEqual([
      ['50G', 50 * 1024 ** 3],
      ['100G', 100 * 1024 ** 3],
    ]);
  });
  it('has the monthly, quarterly and yearly pricing periods, one per licence', () => {
    expect(PRICING_PERIODS).toEqual(['monthly', 'quarterly', 'yearly']);
    expect(LICENSES.map((l) => l.period)).toEqual([...PRICING_PERIODS]);
  });
  it('has a default price in cents for every licence and packet', () => {
    for (const id of [...LICENSES.map((l) => l.id), ...DATA_PACKETS.map((p) => p.id)]) {
      const price = DEFAULT_PRICES[id];
      expect(Number.isInteger(price)).toBe(true);
      expect(price).toBeGreaterThan(0);
    }
    expect(DEFAULT_PRICES.currency).toMatch(/^[A-Z]{3}$/);
  });
});

describe('timeouts and intervals', () => {
  it('times out main calls at 60 s, embedded-host calls at 30 s and chunk loads at 120 s', () => {
    expect(TIMEOUTS.mainRequest).toBe(60_000);
    expect(TIMEOUTS.embeddedHostRequest).toBe(30_000);
    expect(TIMEOUTS.scriptChunkLoad).toBe(120_000);
  });
  it('gives the survey 5 s to load', () => {
    expect(TIMEOUTS.surveyLoad).toBe(5_000);
  });
  it('refreshes the token every 30 minutes, retrying 3 times at 1 s', () => {
    expect(INTERVALS.tokenRefresh).toBe(1_800_000);
    expect(INTERVALS.tokenRefreshRetries).toBe(3);
    expect(INTERVALS.tokenRefreshRetryDelay).toBe(1_000);
  });
  it('polls each running task every 2 to 3 s and an export every 1 s', () => {
    expect(INTERVALS.progressPollMin).toBe(2_000);
    expect(INTERVALS.progressPollMax).toBe(3_000);
    expect(INTERVALS.exportPoll).toBe(1_000);
  });
  it('refreshes the running list every 5 s', () => {
    expect(INTERVALS.runningListRefresh).toBe(5_000);
  });
  it('polls after Buy every 10 s about 5 more times', () => {
    expect(INTERVALS.buyPoll).toBe(10_000);
    expect(INTERVALS.buyPollTimes).toBe(5);
  });
  it('starts the cookie check after 8 s', () => {
    expect(INTERVALS.cookieCheckStart).toBe(8_000);
  });
  it('redirects online after 750 ms, errors offline after 800 ms and reloads on logout after 800 ms', () => {
    expect(INTERVALS.onlineRedirectDelay).toBe(750);
    expect(INTERVALS.offlineErrorDelay).toBe(800);
    expect(INTERVALS.logoutReloadDelay).toBe(800);
  });
  it('shows toasts for 3 s', () => {
    expect(INTERVALS.toast).toBe(3_000);
  });
  it('staggers cloud space refreshes by 1 to 2 s', () => {
    expect(INTERVALS.cloudSpaceStaggerMin).toBe(1_000);
    expect(INTERVALS.cloudSpaceStaggerMax).toBe(2_000);
  });
  it('hides the QR panel for 24 h and shows the banner once a day', () => {
    expect(INTERVALS.qrPanelHidden).toBe(86_400_000);
    expect(INTERVALS.bannerBox).toBe(86_400_000);
  });
  it('delays tips 300 ms and re-checks their position every 60 ms', () => {
    expect(INTERVALS.tipDelay).toBe(300);
    expect(INTERVALS.tipPositionCheck).toBe(60);
  });
});

describe('page sizes and clean-up', () => {
  it('pages tasks by 100 and clean-up results by 20', () => {
    expect(PAGE_SIZES.tasks).toBe(100);
    expect(PAGE_SIZES.cleanup).toBe(20);
  });
  it('lists folders in pages of 1,000 by default (Skyferry’s choice; the spec gives none)', () => {
    expect(PAGE_SIZES.files).toBe(1000);
  });
  it('defaults the clean-up imode to 7 (all three scans)', () => {
    expect(CLEANUP_IMODE_DEFAULT).toBe(7);
    expect(CLEANUP_IMODE_DEFAULT).toBe(1 | 2 | 4);
  });
  it('has a positive default large-file threshold', () => {
    expect(LARGE_FILE_THRESHOLD_DEFAULT).toBe(100 * MB);
  });
});

describe('display thresholds', () => {
  it('truncates task names over 23 columns, keeping 7 and 6 characters', () => {
    expect(TASK_NAME_TRUNCATION).toEqual({ threshold: 23, head: 7, tail: 6 });
  });
  it('colours usage above .75 as danger and above .5 as warn', () => {
    expect(USAGE_COLOUR).toEqual({ danger: 0.75, warn: 0.5 });
  });
  it('has storage bar levels at .7 and .9', () => {
    expect(STORAGE_BAR).toEqual({ enough: 0.7, narrow: 0.9 });
  });
});

describe('buffers and tips', () => {
  it('uses a 4 MB upload buffer and a 2 MB download buffer', () => {
    expect(BUFFERS.upload).toBe(4 * 1024 * 1024);
    expect(BUFFERS.download).toBe(2 * 1024 * 1024);
  });
  it('has the tip geometry of the spec', () => {
    expect(TIP).toEqual({
      maxWidthMini: 200,
      maxWidthSmall: 288,
      highlightPaddingY: 4,
      highlightPaddingX: 8,
      highlightRadius: 8,
      flipThreshold: 0.95,
    });
  });
});

describe('identity of the client', () => {
  it('is front-end version 1.7.8', () => {
    expect(FRONT_END_VERSION).toBe('1.7.8');
  });
  it('has platform codes web 0, Windows 3, Mac 4', () => {
    expect(PLATFORM).toEqual({ web: 0, windows: 3, mac: 4 });
  });
  it('has product ids web 9482, Windows 7920, Mac 8175', () => {
    expect(PRODUCT_ID).toEqual({ web: 9482, windows: 7920, mac: 8175 });
  });
  it('sends the embedded-host client identity of spec section 7', () => {
    expect(EMBEDDED_HOST).toEqual({
      clientType: 1,
      productId: 1,
      productVersion: '1.0.0',
      language: 'en-us',
      appKey: 'skyferry-web',
    });
  });
});
