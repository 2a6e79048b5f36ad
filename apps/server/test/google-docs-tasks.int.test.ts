import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cloud, CreateTaskData, ServerTask, TaskDetail } from '@skyferry/contract';
import { exportBytes, GOOGLE_DOC_MIME } from '@skyferry/testing';
import type { SignedUpUser } from './support/app.ts';
import { connectOAuth, startOAuthTestApp, type OAuthTestApp } from './support/oauth.ts';
import { caller, connectLocal, waitForState } from './support/tasks.ts';

// The google_docs transfer option end to end: a task from Google Drive (the local emulator built
// from Drive's published API documentation, connected through the OAuth flow) to a local folder,
// once exporting Google Docs (an Office file arrives) and once skipping them (nothing arrives and
// the run counts the skip).

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('tasks from Google Drive: Google Docs exported or skipped', () => {
  let app: OAuthTestApp;
  let user: SignedUpUser;
  let drive: Cloud;
  let local: Cloud;
  let localDir: string;
  let planDoc: { name: string; mimeType: string; docText?: string };
  const call = caller(() => app.t);
  const gUser = 'docs-owner@example.com';

  beforeAll(async () => {
    app = await startOAuthTestApp({ env: { SKYFERRY_WORKERS: '1' } });
    user = await app.t.signUp();
    const emu = app.emu.googleDrive;
    const reports = emu.seed(gUser, emu.rootId(gUser), 'Reports');
    emu.seed(gUser, reports.id, 'notes.txt', { content: Buffer.from('plain notes'), mimeType: 'text/plain' });
    planDoc = emu.seed(gUser, reports.id, 'Plan', { mimeType: GOOGLE_DOC_MIME, docText: 'the plan, as text' });
    drive = await connectOAuth(app, user.headers, 'google_drive', gUser, 'Drive');
    localDir = app.t.makeLocalFolder('docs-target');
    local = await connectLocal(call, user.headers, localDir, 'Disk');
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  const body = (to: string, extra: Record<string, unknown> = {}) => ({
    task_type: 0,
    from_cloud: { cloud_id: drive.id, paths: ['/Reports'] },
    to_cloud: { cloud_id: local.id, path: to },
    ...extra,
  });

  async function runTask(payload: Record<string, unknown>): Promise<TaskDetail> {
    const res = await call<CreateTaskData>('POST', '/api/tasks', { headers: user.headers, body: payload });
    if (res.code !== 0) throw new Error(`task: ${res.status} ${res.msg}`);
    return (await waitForState(call, user.headers, (res.data.task as ServerTask).id, undefined, 120_000)).task;
  }

  it('exports Google Docs to Office files by default', async () => {
    const task = await runTask(body('/Exported'));
    expect(task.state, JSON.stringify(task.result_list)).toBe(0);
    expect(task.google_docs).toBe('export');
    expect(task.result).toMatchObject({ outcome: 'success', added: 2, skipped: 0, failed: 0 });
    const dir = join(localDir, 'Exported', 'Reports');
    expect(readdirSync(dir).sort()).toEqual(['Plan.docx', 'notes.txt']);
    expect(readFileSync(join(dir, 'Plan.docx')).equals(exportBytes(planDoc, DOCX))).toBe(true);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('plain notes');
  }, 180_000);

  it('skips Google Docs when asked: nothing arrives for them and the run counts the skip', async () => {
    const task = await runTask(body('/Skipped', { google_docs: 'skip' }));
    expect(task.state, JSON.stringify(task.result_list)).toBe(0);
    expect(task.google_docs).toBe('skip');
    expect(task.result).toMatchObject({ outcome: 'success', added: 1, skipped: 1, failed: 0 });
    const dir = join(localDir, 'Skipped', 'Reports');
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    expect(existsSync(join(dir, 'Plan.docx'))).toBe(false);
    // The task keeps its choice: running it again still skips.
    const again = await call<ServerTask>('GET', `/api/tasks/run/${task.id}`, { headers: user.headers });
    expect(again.code).toBe(0);
    const rerun = (await waitForState(call, user.headers, task.id, undefined, 120_000)).task;
    expect(rerun.result).toMatchObject({ outcome: 'success', skipped: 2 });
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  }, 180_000);

  it('previews the choice in a dry run and refuses an unknown mode', async () => {
    const preview = async (mode: string) => {
      const res = await call<CreateTaskData>('POST', '/api/tasks', {
        headers: user.headers,
        body: body('/Preview', { google_docs: mode, dry_run: true }),
      });
      expect(res.code).toBe(0);
      return (res.data.plan?.items ?? []).filter((i) => i.action === 'copy').map((i) => i.source_path);
    };
    expect((await preview('export')).sort()).toEqual(['/Reports/Plan.docx', '/Reports/notes.txt']);
    expect(await preview('skip')).toEqual(['/Reports/notes.txt']);
    const bad = await call('POST', '/api/tasks', { headers: user.headers, body: body('/x', { google_docs: 'pdf' }) });
    expect(bad.status).toBe(400);
  }, 60_000);
});
