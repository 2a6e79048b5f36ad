import {
  Alert,
  Button,
  Checkbox,
  Group,
  Modal,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Text,
  TextInput,
} from '@mantine/core';
import { IconCalendarTime } from '@tabler/icons-react';
import {
  CONFLICT_RESOLUTIONS,
  Code,
  FILTER_CATEGORIES,
  MAX_TASK_NAME_LENGTH,
  TaskType,
  scheduleFromDialog,
  type ConflictResolution,
  type FilterCategory,
  type PlanQuery,
  type ServerTask,
  type SyncMode,
  type TaskPlan,
  type UpdateTaskBody,
} from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiRequestError } from '../../api/client.ts';
import { toast } from '../messages/toast.ts';
import { ScheduleDialog } from '../schedule/ScheduleDialog.tsx';
import { describeSchedule } from '../schedule/model.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { SameNamePolicyField, SyncModeField } from '../transfer/fields.tsx';
import { usesSameNamePolicy } from '../transfer/model.ts';
import { PreviewDialog } from '../transfer/PreviewDialog.tsx';
import { taskPageApi } from './api.ts';
import {
  changesRuns,
  dialogValueOf,
  editBody,
  editFormOf,
  editMayDelete,
  hasActiveRun,
  type EditForm,
} from './model.ts';

export interface EditTaskDialogProps {
  /** The task to edit; null: closed. */
  task: ServerTask | null;
  onClose: () => void;
  onSaved: (task: ServerTask) => void | Promise<void>;
}

function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The settings of the edit that shape runs, as the plan call takes them. */
function runSettings(body: UpdateTaskBody) {
  const { sync_mode, same_name_policy, filter, conflict_resolution } = body;
  return { sync_mode, same_name_policy, filter, conflict_resolution };
}

/**
 * Edit a task: its name, schedule (on or off, when, in which zone), and what its runs do (sync
 * mode, same-name policy, file filter, conflict rule). A change after which the next run would
 * delete files shows that run's plan first, and is saved once the deletions are confirmed.
 */
export function EditTaskDialog({ task, onClose, onSaved }: EditTaskDialogProps) {
  const { t } = useTranslation('taskpage');
  const tt = useTranslation('transfer').t;
  const [form, setForm] = useState<EditForm | null>(null);
  const [scheduleOpen, setScheduleOpen] = useState(false);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ plan: TaskPlan; body: UpdateTaskBody } | null>(null);

  useEffect(() => {
    setForm(task ? editFormOf(task) : null);
    setError(null);
    setPreview(null);
  }, [task]);

  const previewBody = preview?.body;
  const ask = useCallback(
    async (query: PlanQuery) =>
      task && previewBody
        ? (await taskPageApi.plan(task.id, { ...runSettings(previewBody), plan_query: query })).plan
        : null,
    [task, previewBody],
  );

  if (!task || !form) return null;
  const patch = (p: Partial<EditForm>) => setForm({ ...form, ...p });
  const sync = task.task_type === TaskType.sync;
  const mode: SyncMode = form.syncMode ?? 'one_way';
  const kind = sync ? 'sync' : 'migrate';
  const filterMode = form.filter?.mode ?? 'none';
  const body = editBody(task, form);
  const blocked = changesRuns(body) && hasActiveRun(task.state);

  const save = async (confirmDeletions: boolean) => {
    setSaving(true);
    setError(null);
    try {
      if (!confirmDeletions && editMayDelete(task, body)) {
        const { plan } = await taskPageApi.plan(task.id, runSettings(body));
        if (plan.deletes.count > 0) {
          setPreview({ plan, body });
          return;
        }
      }
      const saved = await taskPageApi.edit(task.id, confirmDeletions ? { ...body, confirm_deletions: true } : body);
      setPreview(null);
      toast.success(t('edit.saved'));
      await onSaved(saved);
    } catch (err) {
      if (err instanceof ApiRequestError && err.code === Code.CONFIRM_DELETIONS && !confirmDeletions) {
        // The plan changed since it was looked at: show it again.
        const { plan } = await taskPageApi.plan(task.id, runSettings(body)).catch(() => ({ plan: null }));
        if (plan) setPreview({ plan, body });
        else setError(err.message);
      } else {
        setError(err instanceof Error ? err.message : String(err));
      }
    } finally {
      setSaving(false);
    }
  };

  return (
    <>
      <Modal opened={preview === null} onClose={onClose} title={t('edit.title')} size="lg" centered>
        <Stack gap="md" data-testid="edit-task">
          <TextInput
            label={t('edit.name')}
            value={form.name}
            maxLength={MAX_TASK_NAME_LENGTH}
            onChange={(e) => patch({ name: e.currentTarget.value })}
            data-testid="edit-name"
          />
          <Stack gap={6}>
            <Switch
              label={t('edit.scheduleOn')}
              checked={form.schedule !== null && form.scheduleOn}
              onChange={(e) => {
                if (e.currentTarget.checked && !form.schedule) setScheduleOpen(true);
                else patch({ scheduleOn: e.currentTarget.checked });
              }}
              data-testid="edit-schedule-on"
            />
            <Group gap="sm" wrap="wrap">
              <Text size="sm" data-testid="edit-schedule">
                {form.schedule
                  ? `${describeSchedule(form.schedule, t)} · ${t('edit.zone', { zone: form.timeZone })}`
                  : t('noSchedule')}
              </Text>
              <Button
                size="compact-sm"
                variant="subtle"
                leftSection={<IconCalendarTime size={14} aria-hidden />}
                onClick={() => setScheduleOpen(true)}
                data-testid="edit-schedule-change"
              >
                {form.schedule ? t('edit.change') : t('edit.setSchedule')}
              </Button>
              {form.schedule && (
                <Button
                  size="compact-sm"
                  variant="subtle"
                  color="gray"
                  onClick={() => patch({ schedule: null, scheduleOn: false })}
                  data-testid="edit-schedule-remove"
                >
                  {t('edit.removeSchedule')}
                </Button>
              )}
            </Group>
          </Stack>
          {sync && <SyncModeField value={mode} onChange={(syncMode) => patch({ syncMode })} testIdPrefix="edit-mode" />}
          {usesSameNamePolicy(kind, mode) && (
            <SameNamePolicyField
              value={form.sameNamePolicy}
              onChange={(sameNamePolicy) => patch({ sameNamePolicy })}
              testIdPrefix="edit-policy"
            />
          )}
          {sync && mode === 'two_way' && (
            <Select
              label={t('settings.conflicts')}
              value={form.conflictResolution}
              onChange={(v) => v && patch({ conflictResolution: v as ConflictResolution })}
              data={CONFLICT_RESOLUTIONS.map((c) => ({ value: c, label: t(`conflictRules.${c}`) }))}
              allowDeselect={false}
              data-testid="edit-conflicts"
            />
          )}
          <Stack gap="xs">
            <Text size="sm" fw={500} id="edit-filter-label">
              {tt('filter')}
            </Text>
            <SegmentedControl
              value={filterMode}
              onChange={(v) =>
                patch({
                  filter:
                    v === 'none'
                      ? null
                      : { mode: v as 'include' | 'exclude', categories: form.filter?.categories ?? ['picture'] },
                })
              }
              aria-labelledby="edit-filter-label"
              data={[
                { value: 'none', label: t('settings:defaults.filterNone') },
                { value: 'include', label: t('settings:defaults.filterInclude') },
                { value: 'exclude', label: t('settings:defaults.filterExclude') },
              ]}
              style={{ alignSelf: 'flex-start', maxWidth: '100%' }}
              data-testid="edit-filter-mode"
            />
            {form.filter && (
              <Checkbox.Group
                value={form.filter.categories}
                onChange={(v) =>
                  form.filter &&
                  patch({
                    filter:
                      v.length > 0
                        ? {
                            mode: form.filter.mode,
                            categories: FILTER_CATEGORIES.filter((c) => (v as FilterCategory[]).includes(c)),
                          }
                        : null,
                  })
                }
                aria-labelledby="edit-filter-label"
              >
                <Group gap="md">
                  {FILTER_CATEGORIES.map((c) => (
                    <Checkbox
                      key={c}
                      value={c}
                      label={t(`settings:defaults.categories.${c}`)}
                      data-testid={`edit-filter-${c}`}
                    />
                  ))}
                </Group>
              </Checkbox.Group>
            )}
          </Stack>
          {blocked && (
            <Alert color="orange" variant="light" data-testid="edit-blocked">
              {t('edit.whileRunning')}
            </Alert>
          )}
          {error && (
            <Alert color="red" variant="light" data-testid="edit-error">
              {error}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={onClose}>
              {t('edit.cancel')}
            </Button>
            <Button
              onClick={() => void save(false)}
              loading={saving}
              disabled={blocked || form.name.trim() === ''}
              data-testid="edit-save"
            >
              {editMayDelete(task, body) ? t('edit.preview') : t('edit.save')}
            </Button>
          </Group>
        </Stack>
      </Modal>
      <ScheduleDialog
        opened={scheduleOpen}
        onClose={() => setScheduleOpen(false)}
        initial={dialogValueOf(form.schedule)}
        onSubmit={(value) => {
          setScheduleOpen(false);
          patch({ schedule: scheduleFromDialog(value), scheduleOn: true, timeZone: browserZone() });
        }}
      />
      <PreviewDialog
        opened={preview !== null}
        plan={preview?.plan ?? null}
        body={null}
        ask={ask}
        confirmDeletions
        twoWay={mode === 'two_way'}
        sourceLabel={cloudLabel(task.from_cloud)}
        targetLabel={cloudLabel(task.to_cloud)}
        scheduled={false}
        starting={saving}
        startLabel={t('edit.save')}
        confirmLabel={t('edit.confirmSave')}
        onClose={() => setPreview(null)}
        onStart={(confirmed) => void save(confirmed)}
      />
    </>
  );
}
