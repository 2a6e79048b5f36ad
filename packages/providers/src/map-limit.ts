/**
 * Runs `fn` over `items`, at most `limit` at a time, and resolves with the results in order. After
 * a failure no further item starts; the first failure is thrown once the items under way have
 * settled, so nothing is left running behind the caller.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let failure: unknown;
  const lane = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (err) {
        if (!failed) failure = err;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  if (failed) throw failure;
  return out;
}
