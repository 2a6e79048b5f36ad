import { Code, formatBytes, type ServerTask } from '@skyferry/contract';
import { ApiRequestError } from '../../api/client.ts';
import { i18n } from '../../i18n/index.ts';
import { loadClouds } from '../session/actions.ts';
import { navigateTo } from '../session/navigation.ts';
import { sessionStore } from '../session/store.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { closeShellDialog, openConnectCloud } from '../shell/store.ts';
import { confirm, showError, showReauthorize } from '../messages/store.ts';

/** How the product answers a failed task call (spec section 8). */
export type TaskErrorKind =
  'license_expired' | 'traffic_insufficient' | 'transaction_cap' | 'premium_required' | 'cloud_auth_expired' | 'other';

export function taskErrorKind(err: unknown): TaskErrorKind {
  if (!(err instanceof ApiRequestError)) return 'other';
  switch (err.code) {
    case Code.LICENSE_EXPIRED:
      return 'license_expired';
    case Code.TRAFFIC_INSUFFICIENT:
      return 'traffic_insufficient';
    case Code.TRANSACTION_CAP:
      return 'transaction_cap';
    case Code.PREMIUM_REQUIRED:
      return 'premium_required';
    case Code.CLOUD_AUTH_EXPIRED:
      return 'cloud_auth_expired';
    default:
      return 'other';
  }
}

function goBuy(): void {
  // The transfer modals close and the user lands on the buy page.
  closeShellDialog('transmissionOpen');
  navigateTo('/buy');
}

/** The Upgrade modal, wherever a paid feature is refused: Upgrade goes to /buy. */
export async function askUpgrade(): Promise<void> {
  const t = i18n.getFixedT(null, 'buy');
  const answer = await confirm({
    title: t('upgrade.title'),
    message: t('upgrade.message'),
    yesLabel: t('upgrade.action'),
    noLabel: t('upgrade.later'),
  });
  if (answer === 'yes') goBuy();
}

/** 4011001: "Your current license has expired." with Renew, which closes the transfer modals and goes to /buy. */
export async function askRenew(): Promise<void> {
  const t = i18n.getFixedT(null, 'transmission');
  const answer = await confirm({
    message: t('errors.licenseExpired'),
    yesLabel: t('errors.renew'),
    noLabel: t('errors.cancel'),
  });
  if (answer === 'yes') goBuy();
}

/**
 * Shows a failed task call the way spec section 8 says: 4011001 "Your current license has
 * expired." with Renew (to /buy), 4001001 with Buy now (to /buy), 6007001 its cap message, a
 * licence needed (billing on, free user) goes to /buy, 401 asks to reauthorize, others show the
 * server's message. `cloudId` names the cloud a 401 is about, when known.
 */
export async function reportTaskError(err: unknown, cloudId?: string): Promise<void> {
  const t = i18n.getFixedT(null, 'transmission');
  const kind = taskErrorKind(err);
  if (kind === 'license_expired') {
    await askRenew();
    return;
  }
  if (kind === 'traffic_insufficient') {
    const answer = await confirm({
      title: t('errors.trafficTitle'),
      message: t('errors.trafficInsufficient'),
      yesLabel: t('errors.buyNow'),
      noLabel: t('errors.cancel'),
    });
    if (answer === 'yes') goBuy();
    return;
  }
  if (kind === 'transaction_cap') {
    await showError({ message: t('errors.transactionCap') });
    return;
  }
  if (kind === 'premium_required') {
    await askUpgrade();
    return;
  }
  if (kind === 'cloud_auth_expired') {
    void loadClouds().catch(() => undefined);
    const cloud = sessionStore.getState().clouds.find((c) => c.id === cloudId);
    if (await showReauthorize({ cloudName: cloud ? cloudLabel(cloud) : undefined })) {
      openConnectCloud(cloud?.cloud_name ?? null);
    }
    return;
  }
  await showError({ message: err instanceof Error && err.message ? err.message : t('errors.unknown') });
}

/**
 * MSG-08: a run stopped for want of transfer data (state 10): "Insufficient transfer traffic",
 * how much it needs in all, and an offer to buy a data package (to /buy).
 */
export async function offerDataPackage(task: Pick<ServerTask, 'needed_size'>): Promise<void> {
  const t = i18n.getFixedT(null, 'transmission');
  const answer = await confirm({
    title: t('errors.trafficTitle'),
    message: t('trafficNeeded', { size: formatBytes(task.needed_size ?? 0) }),
    yesLabel: t('errors.buyPacket'),
    noLabel: t('errors.cancel'),
  });
  if (answer === 'yes') goBuy();
}
