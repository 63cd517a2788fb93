// The fixture every end-to-end file starts from: a whole local stack of its own (its own tables and queues) with
// the bootstrap admin signed in, started before the file's tests and stopped after them.
import { afterAll, beforeAll } from 'vitest';
import { startStack, type Stack, type StackOptions } from '../../local/stack.js';
import { uniqueName } from './aws.js';
import { apiClient } from './http.js';

export const ADMIN = { email: 'admin@example.com', password: 'admin-password' } as const;

export interface StackFixture {
  readonly stack: Stack;
  /** The admin's access token. */
  readonly admin: string;
}

/** More start options over the fixture's own (a free port, a name prefix of the file's, the bootstrap admin). */
export type FixtureOptions = Partial<Omit<StackOptions, 'port' | 'namePrefix' | 'bootstrapAdmin'>>;

/** Starts the stack and signs the admin in; stop it with `stack.stop()`. */
export const startSignedIn = async (name: string, options: FixtureOptions = {}): Promise<StackFixture> => {
  const stack = await startStack({ port: 0, namePrefix: `${uniqueName(name)}-`, bootstrapAdmin: ADMIN, ...options });
  try {
    return { stack, admin: (await apiClient(() => stack.baseUrl).login(ADMIN)).token };
  } catch (error) {
    await stack.stop();
    throw error;
  }
};

/**
 * Registers the file's beforeAll/afterAll; the fields are there once beforeAll ran. Call it before the file's own
 * beforeAll (which then runs after it, with the stack up) and afterAll (which runs before the stack stops).
 */
export const useStack = (name: string, options: FixtureOptions = {}): StackFixture => {
  const fixture = {} as { -readonly [K in keyof StackFixture]: StackFixture[K] };
  beforeAll(async () => {
    Object.assign(fixture, await startSignedIn(name, options));
  });
  afterAll(async () => {
    await fixture.stack?.stop();
  });
  return fixture;
};
