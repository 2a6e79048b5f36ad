import type { Provider } from '@skyferry/providers';
import { refusesCredentials, type CloudRecord, type CloudsService } from '../clouds.ts';

/** A cloud opened for a task. */
interface TaskSide {
  cloud: CloudRecord;
  provider: Provider;
}

/**
 * After a task's work failed with auth_expired or auth_invalid (a revoked or lapsed grant, a changed password), marks the cloud whose
 * service refused expired, as file calls do: it stays, and the user reauthorizes it. The engine
 * does not say which side refused, so each is asked once with a one-entry listing of its root (a
 * stat of "/" may be answered without asking the service). Answers the clouds marked.
 */
export async function markRefusedExpired(
  clouds: Pick<CloudsService, 'markExpired'>,
  sides: readonly TaskSide[],
): Promise<CloudRecord[]> {
  const marked: CloudRecord[] = [];
  for (const side of new Set(sides)) {
    const refused = await side.provider.list('/', { pageSize: 1 }).then(
      () => false,
      (err: unknown) => refusesCredentials(err),
    );
    if (!refused) continue;
    await clouds.markExpired(side.cloud.id).catch(() => undefined);
    marked.push(side.cloud);
  }
  return marked;
}
