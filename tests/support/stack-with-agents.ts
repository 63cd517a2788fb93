// The fixture most end-to-end files share: the stack of stack-fixture.ts with its bootstrap admin signed in, and
// the two local agents (local-1 role=web, local-2 role=db) running, started before the file's tests and stopped
// after them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { useStack, type FixtureOptions, type StackFixture } from './stack-fixture.js';

export { ADMIN } from './stack-fixture.js';

export interface StackWithAgents extends StackFixture {
  /** A scratch folder (the agents' state lives below it); removed afterwards. */
  readonly dir: string;
  readonly agents: readonly LocalAgent[];
}

/** Registers the file's beforeAll/afterAll (as useStack); the fields are there once beforeAll ran. */
export const useStackWithAgents = (name: string, options: FixtureOptions = {}): StackWithAgents => {
  const signedIn = useStack(name, options);
  const fixture = {
    get stack() {
      return signedIn.stack;
    },
    get admin() {
      return signedIn.admin;
    },
    dir: undefined as unknown as string,
    agents: [] as readonly LocalAgent[],
  };
  beforeAll(async () => {
    fixture.dir = await mkdtemp(join(tmpdir(), `deployer-${name}-`));
    fixture.agents = await startLocalAgents(signedIn.stack, fixture.dir, () => undefined);
  });
  // Registered after useStack's: runs before the stack stops.
  afterAll(async () => {
    await Promise.all(fixture.agents.map((a) => a.stop({ graceSeconds: 1 })));
    if (fixture.dir !== undefined) await rm(fixture.dir, { recursive: true, force: true });
  });
  return fixture;
};
