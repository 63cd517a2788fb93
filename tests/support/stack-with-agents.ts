// The fixture most end-to-end files share: a whole local stack with its bootstrap admin signed in and the two local
// agents (local-1 role=web, local-2 role=db) running, started before the file's tests and stopped after them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack, type StackOptions } from '../../local/stack.js';
import { uniqueName } from './aws.js';
import { apiClient } from './http.js';

export const ADMIN = { email: 'admin@example.com', password: 'admin-password' } as const;

export interface StackWithAgents {
  readonly stack: Stack;
  /** The admin's access token. */
  readonly admin: string;
  /** A scratch folder (the agents' state lives below it); removed afterwards. */
  readonly dir: string;
  readonly agents: readonly LocalAgent[];
}

/** Registers the file's beforeAll/afterAll; the fields are there once beforeAll ran. */
export const useStackWithAgents = (name: string, options: Partial<Pick<StackOptions, 'env'>> = {}): StackWithAgents => {
  const fixture = {} as { -readonly [K in keyof StackWithAgents]: StackWithAgents[K] };
  beforeAll(async () => {
    fixture.stack = await startStack({
      port: 0,
      namePrefix: `${uniqueName(name)}-`,
      bootstrapAdmin: ADMIN,
      ...options,
    });
    fixture.admin = (await apiClient(() => fixture.stack.baseUrl).login(ADMIN)).token;
    fixture.dir = await mkdtemp(join(tmpdir(), `deployer-${name}-`));
    fixture.agents = await startLocalAgents(fixture.stack, fixture.dir, () => undefined);
  });
  afterAll(async () => {
    await Promise.all((fixture.agents ?? []).map((a) => a.stop({ graceSeconds: 1 })));
    await fixture.stack?.stop();
    if (fixture.dir !== undefined) await rm(fixture.dir, { recursive: true, force: true });
  });
  return fixture;
};
