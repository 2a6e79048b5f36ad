import type { ServerTask, TaskRun } from '@skyferry/contract';
import { i18n } from '../../i18n/index.ts';
import { confirm } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { tasksApi } from '../tasks/api.ts';
import { reportTaskError } from '../tasks/errors.ts';
import { taskPageApi } from './api.ts';

const tr = () => i18n.getFixedT(null, 'taskpage');

/** Runs a call of a task action; a failure is shown the way task calls are (spec section 8). Null when it failed. */
async function attempt<T>(task: ServerTask, call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (err) {
    await reportTaskError(err, task.to_cloud.cloud_id);
    return null;
  }
}

/** Run now: queues a run of the task, whatever its last outcome. */
export async function runNow(task: ServerTask): Promise<ServerTask | null> {
  const started = await attempt(task, () => tasksApi.run(task.id));
  if (started) toast.success(tr()('started'));
  return started;
}

/** Delete, after a confirmation naming the task; its history goes with it. */
export async function deleteTask(task: ServerTask): Promise<boolean> {
  const answer = await confirm({ message: tr()('confirmDelete', { name: task.task_name }), danger: true });
  if (answer !== 'yes') return false;
  const done = await attempt(task, async () => {
    await tasksApi.remove(task.id);
    return true;
  });
  if (done) toast.success(tr()('deleted'));
  return done === true;
}

/** Duplicate: a copy waiting to be started. */
export async function duplicateTask(task: ServerTask): Promise<ServerTask | null> {
  const copy = await attempt(task, () => taskPageApi.duplicate(task.id));
  if (copy) toast.success(tr()('duplicated', { name: copy.task_name }));
  return copy;
}

/** Verify: compares the source and the target on the server; the comparison is a run of the task. */
export async function verifyTask(task: ServerTask): Promise<TaskRun | null> {
  const run = await attempt(task, () => taskPageApi.verify(task.id));
  if (run) toast.info(tr()('verifyStarted'));
  return run;
}

export async function stopVerifying(task: ServerTask): Promise<void> {
  await attempt(task, () => taskPageApi.stopVerify(task.id));
}

/** Cancel a queued or running run, after the spec's question. */
export async function cancelRun(task: ServerTask): Promise<boolean> {
  const t = i18n.getFixedT(null, 'transmission');
  if ((await confirm({ message: t('confirmCancel') })) !== 'yes') return false;
  return (await attempt(task, () => tasksApi.cancel(task.id))) !== null;
}

/** Retry failed: sends the failed files of the latest run again. */
export async function retryFailed(task: ServerTask): Promise<boolean> {
  const done = await attempt(task, () => tasksApi.retry(task.id));
  if (done) toast.success(tr()('run.retried'));
  return done !== null;
}
