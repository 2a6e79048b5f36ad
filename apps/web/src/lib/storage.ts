/**
 * Local-storage helpers that never throw (storage may be disabled or full). Keys are Skyferry's
 * own (`skyferry.*`) except `Language`, which the spec names.
 */
export function readJson<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    if (raw === null) return fallback;
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

export function writeJson(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage unavailable: the value lasts for this page only
  }
}

export function removeKey(key: string): void {
  try {
    localStorage.removeItem(key);
  } catch {
    // nothing to remove
  }
}

/** Every key Skyferry keeps in local storage, in one place so logout can clear what it must. */
export const STORAGE_KEYS = {
  user: 'skyferry.user',
  tempToken: 'skyferry.temp_token',
  guide: 'skyferry.guide',
  exportSettings: 'skyferry.export_settings',
  transferDefaults: 'skyferry.transfer_defaults',
  recentClouds: 'skyferry.recent_clouds',
  bannerClosedOn: 'skyferry.banner_closed_on',
  /** The server version whose release notes were shown (What's new shows once per version). */
  whatsNewSeen: 'skyferry.whats_new_seen',
  qrClosedAt: 'skyferry.qr_closed_at',
  questionnaireClicked: 'skyferry.questionnaire_clicked',
  /** When the survey on client close last showed (ms), and whether a migration or sync was started. */
  closeSurveyShownAt: 'skyferry.close_survey_shown_at',
  usedTransfer: 'skyferry.used_transfer',
  serviceNoticeClosed: 'skyferry.service_notice_closed',
  /** '1' while the client runs in debug (set by opening any page with ?debug=1, cleared with ?debug=0). */
  debug: 'skyferry.debug',
} as const;
