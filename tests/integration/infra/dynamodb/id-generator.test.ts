import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoIdGenerator } from '../../../../infra/dynamodb/id-generator.js';
import { createTestTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('ids');
const client = dynamoClient();
const ids = new DynamoIdGenerator(DynamoDBDocumentClient.from(client), table, {
  alphabet: 'k3G7QAe51FCsPW92uEOyq4Bg6Sp8YzVTmnU0liwDdHXLajZrfxNhobJIRcMvKt',
  minLength: 6,
});

beforeAll(async () => {
  await createTestTable(client, table);
});

describe('DynamoIdGenerator', () => {
  it('hands out distinct, contiguous short ids under concurrency', async () => {
    // Act
    const made = await Promise.all(Array.from({ length: 40 }, () => ids.next('action')));
    // Assess
    expect(new Set(made.map((m) => m.id)).size).toBe(40);
    expect(new Set(made.map((m) => m.shortId)).size).toBe(40);
    const counters = made.map((m) => ids.decode(m.shortId, 'action')).sort((a, b) => a! - b!);
    expect(counters).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    for (const { id, shortId } of made) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(shortId.length).toBeGreaterThanOrEqual(6);
    }
  });

  it('counts each entity separately, and short ids differ across entities', async () => {
    // Act: the first of each entity
    const firsts = await Promise.all(
      ['tenant', 'sequence', 'solution', 'deployment', 'some_new_entity'].map((e) => ids.next(e)),
    );
    // Assess
    expect(ids.decode(firsts[0]!.shortId, 'tenant')).toBe(1);
    expect(ids.decode(firsts[1]!.shortId, 'sequence')).toBe(1);
    expect(ids.decode(firsts[4]!.shortId, 'some_new_entity')).toBe(1);
    expect(new Set(firsts.map((f) => f.shortId)).size).toBe(5);
    expect(ids.decode(firsts[0]!.shortId, 'sequence')).toBeUndefined();
  });

  it('decodes only its own short ids', () => {
    expect(ids.decode('not-one!', 'action')).toBeUndefined();
    expect(ids.decode('', 'action')).toBeUndefined();
  });
});
