import { z } from 'zod';
import {
  HEADERS,
  cancelTransferQuerySchema,
  createTaskBodySchema,
  createTaskDataSchema,
  envelopeOf,
  listTasksBodySchema,
  listTasksDataSchema,
  ok,
  pollProgressDataSchema,
  progressParamSchema,
  serverTaskSchema,
  taskDetailSchema,
  taskIdParamSchema,
  updateTaskBodySchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { requireUser, userOf } from '../auth.ts';

const security: Array<Record<string, string[]>> = [{ bearer: [] }];
const TASK_BODY = 256 * 1024;

/** Server tasks (migrate and sync on the server) and their progress. Signed-in users only. */
export default async function taskRoutes(app: App, ctx: AppContext): Promise<void> {
  const auth = requireUser(ctx);

  app.post(
    '/api/tasks',
    {
      bodyLimit: TASK_BODY,
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Create a migrate (task_type 0) or sync (1) task, or plan it (dry_run)',
        description:
          'Without a schedule the task starts at once (state 8); with one it waits in state 7 for next_run_time, ' +
          'read in X-Timezone (or time_zone). Checks: 400 "Please select files first", 400 target equals (or is ' +
          'inside) the source path, 400 photos targets take only pictures and videos, 404 path missing. Prompts ' +
          'to confirm by sending again with the flag: 409003 same cloud (confirm_same_cloud), 409004 not enough ' +
          'space (confirm_insufficient_space; data: side, cloud_id, cloud_name, needed, available), 409005 a sync ' +
          'deleting more than half of the target (confirm_deletions). 403001 without a licence when billing is on.',
        security,
        body: createTaskBodySchema,
        response: { 200: envelopeOf(createTaskDataSchema) },
      },
    },
    async (request) => {
      const zone = request.headers[HEADERS.timezone];
      const headerZone = Array.isArray(zone) ? zone[0] : zone;
      return ok(await ctx.tasks.create(userOf(request).userId, request.body, headerZone));
    },
  );

  app.post(
    '/api/tasks/list',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'A page of tasks: completed 0 the running list (1, 2, 7, 8, 9), 1 the finished list',
        security,
        body: listTasksBodySchema,
        response: { 200: envelopeOf(listTasksDataSchema) },
      },
    },
    async (request) => ok(await ctx.tasks.list(userOf(request).userId, request.body)),
  );

  app.get(
    '/api/tasks/run/:id',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Start a task now (also "Restart" after a cancel); answers the task in state 8',
        description: '409006 while a run is queued, running or stopping.',
        security,
        params: taskIdParamSchema,
        response: { 200: envelopeOf(serverTaskSchema) },
      },
    },
    async (request) => ok(await ctx.tasks.runNow(userOf(request).userId, request.params.id)),
  );

  app.get(
    '/api/tasks/retry/:id',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Retransmit the failed part of a failed or partial task (states 6 and 10 run again)',
        description: '409006 for a task in another state.',
        security,
        params: taskIdParamSchema,
        response: { 200: envelopeOf(serverTaskSchema) },
      },
    },
    async (request) => ok(await ctx.tasks.retry(userOf(request).userId, request.params.id)),
  );

  app.get(
    '/api/tasks/:id',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'A task with its failed files (result_list) and destination clouds',
        security,
        params: taskIdParamSchema,
        response: { 200: envelopeOf(taskDetailSchema) },
      },
    },
    async (request) => ok(await ctx.tasks.detail(userOf(request).userId, request.params.id)),
  );

  app.put(
    '/api/tasks/:id',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Edit a task: its schedule switch (is_schedule 1 off, 2 on), name, schedule and what runs do',
        description:
          'Changing sync_mode, same_name_policy, filter or conflict_resolution answers 409006 while a run is queued, ' +
          'going or stopping; when the next run would then delete files (mirror, two-way) it answers 409005 ' +
          '{count, total} until sent again with confirm_deletions (POST /api/tasks/{id}/plan previews it). ' +
          'schedule null removes the schedule. Answers the task.',
        security,
        params: taskIdParamSchema,
        body: updateTaskBodySchema,
        response: { 200: envelopeOf(serverTaskSchema) },
      },
    },
    async (request) => {
      const zone = request.headers[HEADERS.timezone];
      const headerZone = Array.isArray(zone) ? zone[0] : zone;
      return ok(await ctx.taskSystem.editor.edit(userOf(request).userId, request.params.id, request.body, headerZone));
    },
  );

  app.delete(
    '/api/tasks/:id',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Delete a task record (a running task is canceled first)',
        security,
        params: taskIdParamSchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await ctx.tasks.remove(userOf(request).userId, request.params.id);
      return ok(null);
    },
  );

  app.get(
    '/api/cloud-manager/poll-progress/:task_id',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: "A task's status (state), progress, total_counts and finished_counts",
        description: 'Updated at least once a second while the task runs. Code 404 for an unknown task stops polling.',
        security,
        params: progressParamSchema,
        response: { 200: envelopeOf(pollProgressDataSchema) },
      },
    },
    async (request) => ok(await ctx.tasks.poll(userOf(request).userId, request.params.task_id)),
  );

  app.delete(
    '/api/cloud-manager/cancel-transfer',
    {
      preHandler: auth,
      schema: {
        tags: ['tasks'],
        summary: 'Cancel a task: a queued one at once (state 4), a running one stops (state 9, then 4)',
        security,
        querystring: cancelTransferQuerySchema,
        response: { 200: envelopeOf(serverTaskSchema) },
      },
    },
    async (request) => ok(await ctx.tasks.cancel(userOf(request).userId, request.query.task_id)),
  );
}
