export * from './create-db.ts';
export * from './meta-repository.ts';
export type * from './schema/index.ts';
export {
  sql,
  CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
  type Transaction,
  type Selectable,
  type Insertable,
  type Updateable,
} from 'kysely';
export { checkpointRowKey } from './migrations/0020_compact_checkpoints.ts';
export * from './run-file-blocks.ts';
export { onPostgres } from './on-postgres.ts';
