import type { FoundationTables } from './foundation.ts';

export type * from './foundation.ts';

/** Every table of the database; each area adds its own interface here. */
export type Database = FoundationTables;
