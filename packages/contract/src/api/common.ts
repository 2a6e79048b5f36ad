import { z } from 'zod';
import { NAME_PROBLEM_MESSAGE, validateName } from '../names.ts';

/** Ids travel as strings (they are opaque; the database may use any key type). */
export const idSchema = z.string().min(1).max(64);
export const idParamSchema = z.object({ id: idSchema });

export const pageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(1000).default(20),
});

/** An absolute path inside a cloud: "/", "/a/b". No ".." segments, at most 4096 characters. */
export const cloudPathSchema = z
  .string()
  .max(4096)
  .refine((p) => p.startsWith('/'), { message: 'must start with /' })
  .refine((p) => !p.split('/').some((seg) => seg === '..' || seg === '.'), {
    message: 'must not contain . or .. segments',
  })
  .refine((p) => !p.includes('\u0000'), { message: 'must not contain NUL' });

/** A single file or folder name, validated by the contract's naming rules; the issue message is an i18n key. */
export const entryNameSchema = z.string().superRefine((name, ctx) => {
  const problem = validateName(name);
  if (problem) ctx.addIssue({ code: 'custom', message: NAME_PROBLEM_MESSAGE[problem] });
});

/** C0 and C1 control characters and DEL (NUL, line breaks, escapes): never part of a name people read. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARS_RE = /[\u0000-\u001f\u007f-\u009f]/;

/** A name people give something (a task, a cloud's alias): trimmed, `min` to `max` characters, no control characters. */
export function displayNameSchema(max: number, min = 0) {
  return z
    .string()
    .trim()
    .min(min)
    .max(max)
    .refine((s) => !CONTROL_CHARS_RE.test(s), { message: 'must not contain control characters' });
}

export const emptyDataSchema = z.null();
