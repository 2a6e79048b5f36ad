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

export const emptyDataSchema = z.null();
