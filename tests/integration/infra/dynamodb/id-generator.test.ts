import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoIdGenerator } from '../../../../infra/dynamodb/id-generator.js';
import { createTestTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('ids');
const client = dynamoClient();
const ids = new DynamoIdGenerator(DynamoDBDocumentClient.from(client), table, { alphabet: 'k3G7QAe51FCsPW92uEOyq4Bg6Sp8YzVTmnU0liwDdHXLajZrfxNhobJIRcMvKt', minLength: 6 });

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
    const counters = made.map((m) => ids.decode(m.shortId)).sort((a, b) => a! - b!);
    expect(counters).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    for (const { id, shortId } of made) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(shortId.length).toBeGreaterThanOrEqual(6);
    }
  });

  it('counts each entity separately', async () => {
    const first = await ids.next('tenant');
    expect(ids.decode(first.shortId)).toBe(1);
  });

  it('decodes only its own short ids', () => {
    expect(ids.decode('not-one!')).toBeUndefined();
    expect(ids.decode('')).toBeUndefined();
  });
});
