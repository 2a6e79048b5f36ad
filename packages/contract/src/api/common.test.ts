import { describe, expect, it } from 'vitest';
import { emptyDataSchema, idParamSchema, idSchema, pageQuerySchema } from '../index.ts';

describe('common call schemas', () => {
  it('takes ids as non-empty strings of at most 64 characters', () => {
    expect(idSchema.parse('abc')).toBe('abc');
    expect(idSchema.safeParse('').success).toBe(false);
    expect(idSchema.safeParse('x'.repeat(64)).success).toBe(true);
    expect(idSchema.safeParse('x'.repeat(65)).success).toBe(false);
    expect(idSchema.safeParse(5).success).toBe(false);
    expect(idParamSchema.parse({ id: '7' })).toEqual({ id: '7' });
  });

  it('pages from 1 with a default page size of 20, coercing query strings', () => {
    expect(pageQuerySchema.parse({})).toEqual({ page: 1, page_size: 20 });
    expect(pageQuerySchema.parse({ page: '3', page_size: '100' })).toEqual({ page: 3, page_size: 100 });
    expect(pageQuerySchema.safeParse({ page: '0' }).success).toBe(false);
    expect(pageQuerySchema.safeParse({ page_size: '1001' }).success).toBe(false);
    expect(pageQuerySchema.safeParse({ page: '1.5' }).success).toBe(false);
    expect(pageQuerySchema.safeParse({ page: 'x' }).success).toBe(false);
  });

  it('has null as empty data', () => {
    expect(emptyDataSchema.parse(null)).toBeNull();
    expect(emptyDataSchema.safeParse({}).success).toBe(false);
  });
});
