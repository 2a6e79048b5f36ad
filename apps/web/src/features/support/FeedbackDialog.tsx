import {
  Alert,
  Button,
  FileInput,
  Group,
  Loader,
  Modal,
  Select,
  Stack,
  Text,
  TextInput,
  Textarea,
} from '@mantine/core';
import { IconFolderOpen } from '@tabler/icons-react';
import {
  ATTACHMENT_TYPES,
  Code,
  PLATFORM,
  SUPPORT_ATTACHMENTS,
  SUPPORT_CHANNEL,
  type AttachmentType,
  type SupportFormData,
  type TicketAttachment,
} from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiRequestError } from '../../api/client.ts';
import type { DialogSlotProps } from '../../app/slot-types.ts';
import { toast } from '../messages/toast.ts';
import { sessionStore } from '../session/store.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { ensureSupportIdentity, supportApi } from './api.ts';

type Field = 'email' | 'problem_type' | 'contents' | 'attachments';
type Errors = Partial<Record<Field | 'common', string>>;

const EMPTY = { email: '', problemType: null as string | null, details: '', files: [] as File[] };

const ACCEPT = Object.values(SUPPORT_ATTACHMENTS.types).flat().join(',');

/** A chosen file as the ticket carries it: its type from its name, its bytes in base64. */
async function toAttachment(file: File): Promise<TicketAttachment | undefined> {
  const name = file.name.toLowerCase();
  const type = ATTACHMENT_TYPES.find((t: AttachmentType) =>
    (SUPPORT_ATTACHMENTS.types[t] as readonly string[]).some((ext) => name.endsWith(ext)),
  );
  if (!type || file.size > SUPPORT_ATTACHMENTS.maxBytes) return undefined;
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { file_name: file.name, content_type: type, data: btoa(binary) };
}

/**
 * The Feedback dialog (spec: loading, then validation error, then submitting, then closed and
 * cleared on success). The problem-type selector comes from the dynamic form; it is required when
 * the form's first field is a tagger. A visitor gets a temporary identity first.
 */
export function FeedbackDialog({ opened, onClose }: DialogSlotProps) {
  const { t } = useTranslation('support');
  const { t: tShell } = useTranslation('shell');
  const bridge = desktopBridge();
  const [form, setForm] = useState<SupportFormData | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [values, setValues] = useState(EMPTY);
  const [errors, setErrors] = useState<Errors>({});
  const [submitting, setSubmitting] = useState(false);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!opened) return;
    let live = true;
    setForm(null);
    setLoadError(null);
    ensureSupportIdentity()
      .then(() => supportApi.form())
      .then((data) => live && setForm(data))
      .catch((err: unknown) => live && setLoadError(err instanceof Error ? err.message : t('feedback.loadFailed')));
    return () => {
      live = false;
    };
  }, [opened, attempt, t]);

  const tagger = form?.custom_fields[0]?.type === 'tagger' ? form.custom_fields[0] : undefined;

  const edit = (field: Field, patch: Partial<typeof EMPTY>) => {
    setValues((v) => ({ ...v, ...patch }));
    // Editing a field clears its own error and the common one.
    setErrors((e) => ({ ...e, [field]: undefined, common: undefined }));
  };

  const close = () => {
    setValues(EMPTY);
    setErrors({});
    onClose();
  };

  const submit = async () => {
    const found: Errors = {};
    if (values.email.trim() === '') found.email = t('feedback.emailEmpty');
    if (tagger && !values.problemType) found.problem_type = t('feedback.problemTypeEmpty');
    if (values.details.trim() === '') found.contents = t('feedback.detailsEmpty');
    const attachments: TicketAttachment[] = [];
    for (const file of values.files.slice(0, SUPPORT_ATTACHMENTS.max + 1)) {
      const a = values.files.length > SUPPORT_ATTACHMENTS.max ? undefined : await toAttachment(file);
      if (!a) {
        found.attachments = t('feedback.fileRefused', { name: file.name });
        break;
      }
      attachments.push(a);
    }
    setErrors(found);
    if (Object.keys(found).length > 0 || !form) return;
    setSubmitting(true);
    const { settings } = sessionStore.getState();
    try {
      const { msg } = await supportApi.send({
        title: values.details.trim().split('\n')[0]?.slice(0, 100) ?? '',
        contents: values.details,
        email: values.email.trim(),
        name: '',
        product_id: settings.pid,
        product_version: settings.version,
        via: {
          platform: settings.runtime,
          channel: SUPPORT_CHANNEL,
          source: { from: settings.platform === PLATFORM.web ? 'web' : 'desktop', to: 'support' },
        },
        ticket_form_id: form.ticket_form_id,
        ...(tagger && values.problemType ? { custom_fields: [{ id: tagger.id, value: values.problemType }] } : {}),
        ...(attachments.length > 0 ? { attachments } : {}),
      });
      toast.success(msg || t('feedback.sent'));
      close();
    } catch (err) {
      if (err instanceof ApiRequestError) {
        const fields = (err.data as { fields?: Record<string, string> } | null)?.fields;
        if (fields && Object.keys(fields).length > 0) {
          setErrors({
            email: fields.email,
            problem_type: fields.problem_type,
            contents: fields.contents,
            attachments: fields.attachments,
          });
        } else if (err.code === Code.EMAIL_FORMAT) setErrors({ email: err.message });
        else setErrors({ common: err.message });
      } else setErrors({ common: err instanceof Error ? err.message : String(err) });
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <Modal opened={opened} onClose={close} title={t('feedback.title')} centered size="lg">
      {!form && !loadError && (
        <Group justify="center" py="xl" data-testid="feedback-loading">
          <Loader size="sm" />
          <Text size="sm">{t('feedback.loading')}</Text>
        </Group>
      )}
      {loadError && (
        <Stack gap="sm">
          <Alert color="red">{loadError}</Alert>
          <Group justify="flex-end">
            <Button variant="light" onClick={() => setAttempt((n) => n + 1)}>
              {t('feedback.retry')}
            </Button>
          </Group>
        </Stack>
      )}
      {form && (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
          data-testid="feedback-form"
        >
          <Stack gap="sm">
            <Text size="sm" c="dimmed">
              {t('feedback.intro')}
            </Text>
            <TextInput
              label={t('feedback.email')}
              placeholder={t('feedback.emailPlaceholder')}
              type="email"
              autoComplete="email"
              value={values.email}
              error={errors.email}
              onChange={(e) => edit('email', { email: e.currentTarget.value })}
              data-testid="feedback-email"
            />
            {tagger && (
              <Select
                label={tagger.title || t('feedback.problemType')}
                placeholder={t('feedback.problemTypePlaceholder')}
                data={tagger.custom_field_options.map((o) => ({ value: o.value, label: o.name }))}
                value={values.problemType}
                error={errors.problem_type}
                onChange={(v) => edit('problem_type', { problemType: v })}
                comboboxProps={{ withinPortal: true }}
                data-testid="feedback-type"
              />
            )}
            <Textarea
              label={t('feedback.details')}
              placeholder={t('feedback.detailsPlaceholder')}
              rows={4}
              maxLength={10_000}
              value={values.details}
              error={errors.contents}
              onChange={(e) => edit('contents', { details: e.currentTarget.value })}
              data-testid="feedback-details"
            />
            <FileInput
              label={t('feedback.files')}
              placeholder={t('feedback.filesPlaceholder')}
              multiple
              clearable
              accept={ACCEPT}
              value={values.files}
              error={errors.attachments}
              onChange={(files) => edit('attachments', { files })}
              data-testid="feedback-files"
            />
            {bridge?.openLogFolder && (
              <Group gap="xs" wrap="nowrap">
                <Text size="xs" c="dimmed">
                  {tShell('support.logHint')}
                </Text>
                <Button
                  variant="subtle"
                  size="xs"
                  leftSection={<IconFolderOpen size={14} aria-hidden />}
                  onClick={() => bridge.openLogFolder?.()}
                  data-testid="open-log-folder"
                >
                  {tShell('support.openLogFolder')}
                </Button>
              </Group>
            )}
            {errors.common && (
              <Alert color="red" data-testid="feedback-error">
                {errors.common}
              </Alert>
            )}
            <Group justify="flex-end">
              <Button type="submit" disabled={submitting} data-testid="feedback-submit">
                {submitting ? t('feedback.submitting') : t('feedback.submit')}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
