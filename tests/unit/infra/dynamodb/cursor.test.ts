import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../../domain/errors.js';
import { decodeCursor, encodeCursor } from '../../../../infra/dynamodb/cursor.js';

describe('cursors', () => {
  it('round-trips a DynamoDB key and is opaque', () => {
    const key = { pk: 'DEPLOYMENT#1', sk: 'META', n: 3 };
    const cursor = encodeCursor(key)!;
    expect(cursor).not.toContain('DEPLOYMENT');
    expect(decodeCursor(cursor)).toEqual(key);
  });

  it('treats no cursor as the first page', () => {
    expect(decodeCursor(undefined)).toBeUndefined();
    expect(decodeCursor('')).toBeUndefined();
    expect(encodeCursor(undefined)).toBeUndefined();
  });

  it.each(['%%%', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"pk":{"S":"x"}}').toString('base64url')])(
    'rejects a tampered cursor %s',
    (cursor) => {
      expect(() => decodeCursor(cursor)).toThrow(ValidationError);
    },
  );
});
