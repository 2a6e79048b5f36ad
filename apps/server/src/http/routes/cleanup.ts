import {
  cleanupListQuerySchema,
  cleanupTaskDataSchema,
  cleanupTaskParamSchema,
  cleanupTaskQuerySchema,
  cleanupTaskSchema,
  deleteCleanupBodySchema,
  deleteCleanupDataSchema,
  duplicateFilesPageSchema,
  emptyFoldersPageSchema,
  envelopeOf,
  largeFilesPageSchema,
  ok,
  runCleanupBodySchema,
  runCleanupDataSchema,
  type CleanupKind,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { identityOf, requireIdentity } from '../auth.ts';

const security: Array<Record<string, string[]>> = [{ bearer: [] }, { temp: [] }];
const tags = ['cleanup'];
const DELETE_BODY = 128 * 1024;

/**
 * Clean-up ("Free up storage", spec section 7): scans of a connected cloud for empty folders,
 * duplicate files and large files, their results, and deleting them. For signed-in users and
 * visitors (their temporary clouds).
 */
export default async function cleanupRoutes(app: App, ctx: AppContext): Promise<void> {
  const auth = requireIdentity(ctx);
  const cleanup = ctx.cleanup;

  app.post(
    '/api/cleanup/run',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Start a scan of a cloud folder; answers task_id',
        description:
          'imode is a bit set: 1 empty folders, 2 duplicate files, 4 large files (default 7). large_threshold ' +
          "in bytes (default 100 MB). A rescan replaces the cloud's previous scan (a running one is cancelled). " +
          "404 for a cloud that is not the caller's, 401 when its authorisation expired, 403003 when the kind " +
          'cannot be cleaned up.',
        security,
        body: runCleanupBodySchema,
        response: { 200: envelopeOf(runCleanupDataSchema) },
      },
    },
    async (request) => ok(await cleanup.run(identityOf(request), request.body)),
  );

  app.get(
    '/api/cleanup/task',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: "The caller's latest scan (of one cloud with cloud_id), or null",
        security,
        querystring: cleanupTaskQuerySchema,
        response: { 200: envelopeOf(cleanupTaskDataSchema) },
      },
    },
    async (request) => ok(await cleanup.latest(identityOf(request), request.query.cloud_id)),
  );

  app.get(
    '/api/cleanup/poll-progress/:task_id',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'The scan with its progress (status 1 while scanning) and, once done, its result counts',
        description: 'Code 404 for an unknown scan (stops polling).',
        security,
        params: cleanupTaskParamSchema,
        response: { 200: envelopeOf(cleanupTaskSchema) },
      },
    },
    async (request) => ok(await cleanup.poll(identityOf(request), request.params.task_id)),
  );

  app.delete(
    '/api/cleanup/task/:task_id',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Cancel a running scan (status 4); answers the scan',
        security,
        params: cleanupTaskParamSchema,
        response: { 200: envelopeOf(cleanupTaskSchema) },
      },
    },
    async (request) => ok(await cleanup.cancel(identityOf(request), request.params.task_id)),
  );

  const lists = [
    { path: '/api/cleanup/empty-folders', kind: 'empty_folders', page: emptyFoldersPageSchema, what: 'empty folders' },
    {
      path: '/api/cleanup/duplicate-files',
      kind: 'duplicate_files',
      page: duplicateFilesPageSchema,
      what: 'duplicate groups',
    },
    { path: '/api/cleanup/large-files', kind: 'large_files', page: largeFilesPageSchema, what: 'large files' },
  ] as const;

  for (const list of lists) {
    app.get(
      list.path,
      {
        preHandler: auth,
        schema: {
          tags,
          summary: `A page of the scan's ${list.what} (page_size 20 by default)`,
          description:
            'Filter by category (files only) and sort by size, date or name, asc or desc. With billing on and no ' +
            'licence only the first 20 results are visible (limited true; total is still the full count).',
          security,
          querystring: cleanupListQuerySchema,
          response: { 200: envelopeOf(list.page) },
        },
      },
      async (request) => {
        const identity = identityOf(request);
        if (list.kind === 'empty_folders') return ok(await cleanup.emptyFolders(identity, request.query));
        if (list.kind === 'duplicate_files') return ok(await cleanup.duplicateFiles(identity, request.query));
        return ok(await cleanup.largeFiles(identity, request.query));
      },
    );

    app.delete(
      list.path,
      {
        bodyLimit: DELETE_BODY,
        preHandler: auth,
        schema: {
          tags,
          summary: `Delete selected ${list.what} (ids), or all (all: true) from the cloud`,
          description:
            "To the cloud's trash where it has one. Items changed since the scan (or folders no longer empty) are " +
            'left alone and listed in failed. Duplicates: deleting every remaining copy of a group needs ' +
            'delete_all_copies (else 400); all keeps the newest copy of each group (keep: oldest to keep that). ' +
            '403001 for all, or items beyond the first 20, without a licence when billing is on; 409006 while the ' +
            'scan runs; 409007 while another deletion of the same scan runs (try again when it ends).',
          security,
          body: deleteCleanupBodySchema,
          response: { 200: envelopeOf(deleteCleanupDataSchema) },
        },
      },
      async (request) => ok(await cleanup.delete(identityOf(request), list.kind as CleanupKind, request.body)),
    );
  }
}
