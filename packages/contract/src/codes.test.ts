import { describe, expect, it } from 'vitest';
import { CODE_MEANINGS, Code, errorEnvelope, envelopeOf, fail, httpStatusOf, isEnvelope, ok } from './index.ts';
import { z } from 'zod';

describe('response codes', () => {
  it('keeps the numbers of spec section 8', () => {
    expect(Code.OK).toBe(0);
    expect(Code.UNAUTHENTICATED).toBe(140013);
    expect(Code.REFRESH_REJECTED).toBe(230011);
    expect(Code.LICENSE_EXPIRED).toBe(4011001);
    expect(Code.TRAFFIC_INSUFFICIENT).toBe(4001001);
    expect(Code.TRANSACTION_CAP).toBe(6007001);
    expect(Code.CLOUD_AUTH_EXPIRED).toBe(401);
    expect(Code.BAD_REQUEST).toBe(400);
    expect(Code.EMAIL_FORMAT).toBe(312212);
    expect(Code.NOT_FOUND).toBe(404);
  });

  it('gives every code a distinct number', () => {
    const values = Object.values(Code);
    expect(new Set(values).size).toBe(values.length);
  });

  it('documents the meaning of every code, in the words of the catalogue where it has them', () => {
    for (const value of Object.values(Code)) {
      expect(CODE_MEANINGS[value], `meaning of ${value}`).toMatch(/\S/);
    }
    expect(Object.keys(CODE_MEANINGS).map(Number).sort()).toEqual(Object.values(Code).sort());
    expect(CODE_MEANINGS[Code.LICENSE_EXPIRED]).toBe('Your current license has expired.');
    expect(CODE_MEANINGS[Code.EMAIL_FORMAT]).toBe('Email format error.');
    expect(CODE_MEANINGS[Code.CLOUD_ALREADY_BOUND]).toBe('This cloud drive has been bound.');
  });

  it("encodes the HTTP status in the first three digits of Skyferry's six-digit codes", () => {
    const spec = new Set<number>([
      Code.OK,
      Code.BAD_REQUEST,
      Code.CLOUD_AUTH_EXPIRED,
      Code.NOT_FOUND,
      Code.UNAUTHENTICATED,
      Code.REFRESH_REJECTED,
      Code.EMAIL_FORMAT,
      Code.LICENSE_EXPIRED,
      Code.TRAFFIC_INSUFFICIENT,
      Code.TRANSACTION_CAP,
    ]);
    const cloudSide = new Set<number>([
      Code.CLOUD_OPERATION_ERROR,
      Code.CLOUD_UNAVAILABLE,
      Code.INSUFFICIENT_TARGET_STORAGE,
    ]);
    for (const value of Object.values(Code)) {
      if (spec.has(value)) continue;
      expect(value, `code ${value}`).toBeGreaterThanOrEqual(400_000);
      expect(value).toBeLessThan(600_000);
      expect(httpStatusOf(value)).toBe(cloudSide.has(value) ? 424 : Math.floor(value / 1000));
    }
  });
});

describe('httpStatusOf', () => {
  it.each([
    [Code.OK, 200],
    [Code.BAD_REQUEST, 400],
    [Code.CLOUD_AUTH_EXPIRED, 401],
    [Code.NOT_FOUND, 404],
    [Code.UNAUTHENTICATED, 401],
    [Code.REFRESH_REJECTED, 401],
    [Code.EMAIL_FORMAT, 400],
    [Code.LICENSE_EXPIRED, 402],
    [Code.TRAFFIC_INSUFFICIENT, 402],
    [Code.TRANSACTION_CAP, 429],
    [Code.PREMIUM_REQUIRED, 403],
    [Code.CLOUD_LIMIT_REACHED, 403],
    [Code.FORBIDDEN, 403],
    [Code.CLOUD_ALREADY_BOUND, 409],
    [Code.ALREADY_EXISTS, 409],
    [Code.CONFIRM_SAME_CLOUD, 409],
    [Code.CONFIRM_INSUFFICIENT_SPACE, 409],
    [Code.CONFIRM_DELETIONS, 409],
    [Code.CONFLICT, 409],
    [Code.CLEANUP_DELETION_RUNNING, 409],
    [Code.PAYLOAD_TOO_LARGE, 413],
    [Code.CLOUD_CREDENTIALS_INVALID, 422],
    [Code.RATE_LIMITED, 429],
    [Code.INTERNAL, 500],
    // What a cloud did never makes Skyferry answer 5xx.
    [Code.CLOUD_OPERATION_ERROR, 424],
    [Code.CLOUD_UNAVAILABLE, 424],
    [Code.INSUFFICIENT_TARGET_STORAGE, 424],
  ])('code %i travels with HTTP %i', (code, status) => {
    expect(httpStatusOf(code)).toBe(status);
  });

  it('answers 400 for codes it does not know', () => {
    expect(httpStatusOf(7)).toBe(400);
    expect(httpStatusOf(-1)).toBe(400);
    expect(httpStatusOf(99_999)).toBe(400);
    expect(httpStatusOf(600_000)).toBe(400);
    expect(httpStatusOf(12_345_678)).toBe(400);
  });

  it('always answers a valid HTTP error status for non-zero codes', () => {
    for (const value of Object.values(Code)) {
      const status = httpStatusOf(value);
      if (value === Code.OK) expect(status).toBe(200);
      else {
        expect(status).toBeGreaterThanOrEqual(400);
        expect(status).toBeLessThan(600);
      }
    }
  });
});

describe('envelope helpers', () => {
  it('wraps success as code 0 with msg "success"', () => {
    expect(ok({ a: 1 })).toEqual({ code: 0, msg: 'success', data: { a: 1 } });
    expect(ok(null, 'done')).toEqual({ code: 0, msg: 'done', data: null });
    expect(ok([])).toEqual({ code: 0, msg: 'success', data: [] });
  });

  it('wraps failures with null data unless given', () => {
    expect(fail(Code.NOT_FOUND, 'Not found.')).toEqual({ code: 404, msg: 'Not found.', data: null });
    expect(fail(Code.CONFIRM_DELETIONS, 'confirm', { count: 3 })).toEqual({
      code: Code.CONFIRM_DELETIONS,
      msg: 'confirm',
      data: { count: 3 },
    });
  });

  it('recognises envelopes and nothing else', () => {
    expect(isEnvelope(ok(1))).toBe(true);
    expect(isEnvelope({ code: 0, msg: '', data: null })).toBe(true);
    expect(isEnvelope({ code: 0, msg: '', data: undefined })).toBe(true);
    expect(isEnvelope({ code: 0, msg: '' })).toBe(false);
    expect(isEnvelope({ code: '0', msg: '', data: null })).toBe(false);
    expect(isEnvelope({ code: 0, msg: 1, data: null })).toBe(false);
    expect(isEnvelope(null)).toBe(false);
    expect(isEnvelope(undefined)).toBe(false);
    expect(isEnvelope('{"code":0}')).toBe(false);
    expect(isEnvelope([0, '', null])).toBe(false);
  });

  it('builds an envelope schema around a data schema', () => {
    const schema = envelopeOf(z.object({ id: z.string() }));
    expect(schema.parse({ code: 0, msg: 'success', data: { id: 'a' } })).toEqual({
      code: 0,
      msg: 'success',
      data: { id: 'a' },
    });
    expect(schema.safeParse({ code: 0, msg: 'success', data: { id: 1 } }).success).toBe(false);
    expect(schema.safeParse({ code: 0.5, msg: 'success', data: { id: 'a' } }).success).toBe(false);
    expect(schema.safeParse({ msg: 'success', data: { id: 'a' } }).success).toBe(false);
  });

  it('describes error envelopes', () => {
    expect(errorEnvelope.parse(fail(404, 'x'))).toEqual({ code: 404, msg: 'x', data: null });
    expect(errorEnvelope.parse(fail(409005, 'x', { n: 1 })).data).toEqual({ n: 1 });
    expect(errorEnvelope.safeParse({ code: 404, data: null }).success).toBe(false);
  });
});
