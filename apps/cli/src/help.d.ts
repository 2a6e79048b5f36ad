import type { ParseArgsConfig } from 'node:util';
import type { TransferMode } from '@skyferry/engine';

/** The contract's SAME_NAME_POLICIES, FILTER_CATEGORIES, CONFLICT_RESOLUTIONS and CLOUD_KINDS, written out. */
export const HELP_LISTS: {
  sameName: readonly string[];
  categories: readonly string[];
  conflicts: readonly string[];
  kinds: readonly string[];
};

export const COMMANDS: Record<string, { mode?: TransferMode; args: string; about: string }>;

type OptionSpec = { type: 'boolean' | 'string'; short?: string; multiple?: boolean };
/** The filter flags (a part of OPTIONS). */
export const FILTER_OPTIONS: Record<string, OptionSpec>;
declare const OPTION_SPECS: {
  help: { type: 'boolean'; short: 'h' };
  version: { type: 'boolean'; short: 'V' };
  config: { type: 'string' };
  'dry-run': { type: 'boolean'; short: 'n' };
  transfers: { type: 'string' };
  'same-name': { type: 'string' };
  include: { type: 'string'; multiple: true };
  exclude: { type: 'string'; multiple: true };
  filter: { type: 'string'; multiple: true };
  'include-from': { type: 'string'; multiple: true };
  'exclude-from': { type: 'string'; multiple: true };
  'filter-from': { type: 'string'; multiple: true };
  'min-size': { type: 'string' };
  'max-size': { type: 'string' };
  'min-age': { type: 'string' };
  'max-age': { type: 'string' };
  'ignore-case': { type: 'boolean' };
  types: { type: 'string' };
  'exclude-types': { type: 'string' };
  conflict: { type: 'string' };
  yes: { type: 'boolean'; short: 'y' };
  'no-trash': { type: 'boolean' };
  'ignore-free-space': { type: 'boolean' };
  'copy-links': { type: 'boolean'; short: 'L' };
  'skip-links': { type: 'boolean' };
  resync: { type: 'boolean' };
  'one-way': { type: 'boolean' };
  download: { type: 'boolean' };
  checkers: { type: 'string' };
  'delete-empty-src-dirs': { type: 'boolean' };
  json: { type: 'boolean' };
  quiet: { type: 'boolean'; short: 'q' };
  keep: { type: 'string' };
  level: { type: 'string' };
  bwlimit: { type: 'string' };
  'max-transfer': { type: 'string' };
  checksum: { type: 'boolean'; short: 'c' };
  'log-file': { type: 'string' };
  stats: { type: 'string' };
  'no-browser': { type: 'boolean' };
  until: { type: 'string' };
  'to-server': { type: 'string' };
};
/** The options of every command, for node:util's parseArgs. */
export const OPTIONS: typeof OPTION_SPECS & ParseArgsConfig['options'] & Record<string, OptionSpec>;

/** The values parseArgs gives for OPTIONS. */
export type Values = {
  [K in keyof typeof OPTION_SPECS]?: (typeof OPTION_SPECS)[K] extends { multiple: true }
    ? string[]
    : (typeof OPTION_SPECS)[K]['type'] extends 'string'
      ? string
      : boolean;
};

export function helpText(): string;
export function version(): Promise<string>;
