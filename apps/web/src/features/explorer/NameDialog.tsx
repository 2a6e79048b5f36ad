import { Button, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { FORBIDDEN_NAME_CHARS, validateName } from '@skyferry/contract';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { blocksKey, stripForbidden } from './model.ts';

export interface NameDialogProps {
  opened: boolean;
  title: string;
  label: string;
  initial: string;
  submitLabel: string;
  onClose: () => void;
  /** Resolves when done; a thrown Error's message is shown under the field. */
  onSubmit: (name: string) => Promise<void>;
}

/**
 * A name field (new folder, rename) that refuses the forbidden characters / : * ? \ " < > | as they
 * are typed (a pasted name with one stays as pasted, and cannot be sent), saying why, and checks the
 * other naming rules before sending.
 */
export function NameDialog({ opened, title, label, initial, submitLabel, onClose, onSubmit }: NameDialogProps) {
  const { t } = useTranslation('explorer');
  const [value, setValue] = useState(initial);
  const [error, setError] = useState('');
  const [blocked, setBlocked] = useState(false);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (!opened) return;
    setValue(initial);
    setError('');
    setBlocked(false);
    // Select the name without its extension, as file managers do.
    requestAnimationFrame(() => {
      const el = input.current;
      if (!el) return;
      el.focus();
      const dot = initial.lastIndexOf('.');
      el.setSelectionRange(0, dot > 0 ? dot : initial.length);
    });
  }, [opened, initial]);

  const submit = async () => {
    const problem = validateName(value);
    if (problem) {
      setError(t(`nameProblem.${problem}`));
      return;
    }
    setBusy(true);
    try {
      await onSubmit(value);
      onClose();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal opened={opened} onClose={onClose} title={title} centered>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Stack gap="sm">
          <TextInput
            ref={input}
            // The modal's first focus goes here, not to its close button, so typing starts at once.
            data-autofocus
            label={label}
            value={value}
            data-testid="name-input"
            error={error || undefined}
            onKeyDown={(e) => {
              if (blocksKey(e.key, { ctrl: e.ctrlKey, meta: e.metaKey, alt: e.altKey })) {
                e.preventDefault();
                setBlocked(true);
              }
            }}
            onChange={(e) => {
              // A pasted name keeps what was pasted ("2024/Q1" does not quietly become "2024Q1"):
              // the message says why it cannot be used until it is changed.
              const next = e.currentTarget.value;
              setBlocked(stripForbidden(next) !== next);
              setValue(next);
              setError('');
            }}
          />
          {blocked && (
            <Text size="xs" c="orange.8" role="status" data-testid="name-blocked">
              {t('forbiddenChars', { chars: FORBIDDEN_NAME_CHARS.join(' ') })}
            </Text>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('cancel')}
            </Button>
            <Button type="submit" loading={busy} disabled={value.trim() === '' || stripForbidden(value) !== value}>
              {submitLabel}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
