import { Readable } from 'node:stream';
import {
  envelopeOf,
  listRunsDataSchema,
  listRunsQuerySchema,
  ok,
  runFilesDataSchema,
  runFilesQuerySchema,
  runLogQuerySchema,
  runParamsSchema,
  serverTaskSchema,
  taskIdParamSchema,
  taskPlanBodySchema,
  taskPlanDataSchema,
  taskRunSchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { requireUser, userOf } from '../auth.ts';
import { contentDisposition } from './files.ts';

const security: Array<Record<string, string[]>> = [{ bearer: [] }];
const TASK_BODY = 256 * 1024;

/**
 * The Tasks page's calls: a task's run history, each run's files and log, Verify (source compared
 * with target), the plan of an edit, and Duplicate. Signed-in users only; a task or run that is
 * not the caller's is "not found".
 */
export default async function taskRunRoutes(app: App, ctx: AppContext): Promise<void> {
  const auth = requireUser(ctx);
  const { runs, verify, editor } = ctx.taskSystem;

  app.get(
    '/api/tasks/:id/runs',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: "A page of a task's runs, newest first (transfers and verifications)",
        description:
          'Each run: trigger (manual, schedule, retry, resume), outcome (null while running), start, end, ' +
          'counts by outcome (whole) and the rows kept of each (listed), bytes, speed, error. Runs are kept ' +
          'SKYFERRY_RUN_HISTORY_DAYS days after they end.',
        security,
        params: taskIdParamSchema,
        querystring: listRunsQuerySchema,
        response: { 200: envelopeOf(listRunsDataSchema) },
      },
    },
    async (request) => ok(await runs.list(userOf(request).userId, request.params.id, request.query)),
  );

  app.get(
    '/api/tasks/:id/runs/:run_id',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'One run of a task with its figures',
        security,
        params: runParamsSchema,
        response: { 200: envelopeOf(taskRunSchema) },
      },
    },
    async (request) => ok(await runs.get(userOf(request).userId, request.params.id, request.params.run_id)),
  );

  app.get(
    '/api/tasks/:id/runs/:run_id/files',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'A page of the files of a run, by outcome, searchable by path',
        description:
          "Pages follow the run's order: pass next_cursor as cursor for the next. Each file: outcome, side, path, " +
          "the other name of a conflict kept both ways (or a verification's target path), size, reason, message.",
        security,
        params: runParamsSchema,
        querystring: runFilesQuerySchema,
        response: { 200: envelopeOf(runFilesDataSchema) },
      },
    },
    async (request) =>
      ok(await runs.files(userOf(request).userId, request.params.id, request.params.run_id, request.query)),
  );

  app.get(
    '/api/tasks/:id/runs/:run_id/log',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'The log of a run to download: text (one line a file) or JSON lines',
        description: 'The first line (or lines, in text) holds the run; then one line per file row of the run.',
        security,
        params: runParamsSchema,
        querystring: runLogQuerySchema,
      },
    },
    async (request, reply) => {
      const { name, lines } = await runs.log(
        userOf(request).userId,
        request.params.id,
        request.params.run_id,
        request.query.format,
      );
      reply.header(
        'content-type',
        request.query.format === 'jsonl' ? 'application/x-ndjson; charset=utf-8' : 'text/plain; charset=utf-8',
      );
      reply.header('content-disposition', contentDisposition('attachment', name));
      reply.header('cache-control', 'private, no-cache');
      return reply.send(Readable.from(lines));
    },
  );

  app.post(
    '/api/tasks/:id/verify',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Verify a task: compare its source and target (as skyferry check), as a run of kind verify',
        description:
          'Nothing is written. Migrations and one-way or incremental syncs ignore extra files on the target. ' +
          'Poll GET /api/tasks/{id}/runs/{run_id}; outcome same, differs, partial (something could not be read), ' +
          "failed or canceled; the differences are the run's files. 409006 while a verification of the task runs.",
        security,
        params: taskIdParamSchema,
        response: { 200: envelopeOf(taskRunSchema) },
      },
    },
    async (request) => ok(await verify.start(userOf(request).userId, request.params.id)),
  );

  app.delete(
    '/api/tasks/:id/verify',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: "Stop a task's verification; answers its run (null when none runs)",
        security,
        params: taskIdParamSchema,
        response: { 200: envelopeOf(taskRunSchema.nullable()) },
      },
    },
    async (request) => ok(await verify.cancel(userOf(request).userId, request.params.id)),
  );

  app.post(
    '/api/tasks/:id/plan',
    {
      bodyLimit: TASK_BODY,
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: "What a task's next run would do with the given settings (the plan of an edit; changes nothing)",
        description:
          'The settings of PUT /api/tasks/{id} (sync_mode, same_name_policy, filter, conflict_resolution); ' +
          'plan_query pages the items as in a dry run of POST /api/tasks. Two-way syncs are planned against ' +
          "the task's own state.",
        security,
        params: taskIdParamSchema,
        body: taskPlanBodySchema,
        response: { 200: envelopeOf(taskPlanDataSchema) },
      },
    },
    async (request) => ok(await editor.plan(userOf(request).userId, request.params.id, request.body)),
  );

  app.post(
    '/api/tasks/:id/duplicate',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Duplicate a task: a copy with the same clouds and settings, waiting to be started (state 7)',
        description: 'A schedule is copied switched off.',
        security,
        params: taskIdParamSchema,
        response: { 200: envelopeOf(serverTaskSchema) },
      },
    },
    async (request) => ok(await editor.duplicate(userOf(request).userId, request.params.id)),
  );
}
