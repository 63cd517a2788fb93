// Opaque pagination cursors over DynamoDB's LastEvaluatedKey: base64url JSON that clients pass back unchanged.
import { ValidationError } from '../../domain/errors.js';

export type DynamoKey = Record<string, string | number>;

export const encodeCursor = (key: DynamoKey | undefined): string | undefined =>
  key === undefined ? undefined : Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');

export const decodeCursor = (cursor: string | undefined): DynamoKey | undefined => {
  if (cursor === undefined || cursor === '') return undefined;
  const invalid = ValidationError.field('cursor', 'The cursor is not one this service issued.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    Object.values(parsed).some((value) => typeof value !== 'string' && typeof value !== 'number')
  ) {
    throw invalid;
  }
  return parsed as DynamoKey;
};
