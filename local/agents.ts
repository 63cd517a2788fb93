// The two agents `npm start` runs beside the service (decisions.md section 1): local-1 (env=local, role=web) and
// local-2 (env=local, role=db), in this process, each with its state and work folders under `dir`. Each start
// hands each a fresh single-use enrollment token carrying its tags, written straight to the table (the server
// applies the token's tags, not the agent's): an agent whose saved agent token still works keeps its target; one
// whose target is gone (deleted, or an --in-memory stack) enrolls again.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { join } from 'node:path';
import { startAgent, type RunningAgent } from '../agent/agent.js';
import { ENROLLMENT_TOKEN_PREFIX } from '../domain/targets/enrollment.js';
import type { Tag } from '../domain/targets/types.js';
import { randomTokens } from '../infra/crypto/tokens.js';
import { randomUUID } from 'node:crypto';
import { DynamoEnrollmentTokenRepository } from '../infra/dynamodb/target-repository.js';
import { LOCAL_CREDENTIALS } from './emulators.js';
import type { Stack } from './stack.js';

export const LOCAL_AGENTS = [
  {
    name: 'local-1',
    tags: [
      { key: 'env', value: 'local' },
      { key: 'role', value: 'web' },
    ],
  },
  {
    name: 'local-2',
    tags: [
      { key: 'env', value: 'local' },
      { key: 'role', value: 'db' },
    ],
  },
] as const;

/** A one-hour, single-use enrollment token for a global target with these tags, created without going through the API. */
export const localEnrollmentToken = async (
  stack: Pick<Stack, 'dynamoEndpoint' | 'env'>,
  tags: readonly Tag[] = [],
): Promise<string> => {
  const client = new DynamoDBClient({
    endpoint: stack.dynamoEndpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    const token = `${ENROLLMENT_TOKEN_PREFIX}${randomTokens.random(32)}`;
    const now = new Date();
    await new DynamoEnrollmentTokenRepository(
      DynamoDBDocumentClient.from(client),
      stack.env['TABLE_NAME'] as string,
    ).create({
      id: randomUUID(),
      tokenHash: randomTokens.hash(token),
      tags,
      maxUses: 1,
      uses: 0,
      tenantId: null,
      environmentId: null,
      createdBy: 'npm-start',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    });
    return token;
  } finally {
    client.destroy();
  }
};

/**
 * What commands of the embedded agents start from: the basics of a login shell, never this process's own
 * environment (which holds the service's configuration, the encryption keyring among it).
 */
const commandEnvironment = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'TERM'].flatMap((k) =>
      process.env[k] === undefined ? [] : [[k, process.env[k]]],
    ),
  );

export const startLocalAgents = async (
  stack: Pick<Stack, 'baseUrl' | 'dynamoEndpoint' | 'env'>,
  dir: string,
  log: (line: string) => void,
): Promise<readonly RunningAgent[]> => {
  return Promise.all(
    LOCAL_AGENTS.map(async (agent) => {
      const enrollToken = await localEnrollmentToken(stack, agent.tags);
      return startAgent({
        server: stack.baseUrl,
        name: agent.name,
        tags: [...agent.tags],
        enrollToken,
        stateDir: join(dir, agent.name),
        log,
        env: commandEnvironment(),
      });
    }),
  );
};
