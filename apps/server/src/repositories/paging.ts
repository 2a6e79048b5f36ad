/**
 * A page read with a window count (`_total`) and how many rows there are in all: the page and the
 * count come from one statement, so they agree (as two queries on PostgreSQL's pool they could see
 * different moments). A page past the end carries no count: `count` asks for it alone.
 */
export async function withTotal<R extends { _total: unknown }>(
  found: R[],
  count: () => Promise<{ n: unknown }>,
): Promise<{ rows: Array<Omit<R, '_total'>>; total: number }> {
  const first = found[0];
  if (first) return { rows: found.map(({ _total, ...row }) => row), total: Number(first._total) };
  return { rows: [], total: Number((await count()).n) };
}
