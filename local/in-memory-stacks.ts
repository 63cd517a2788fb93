// The in-memory stacks running from this checkout (`npm start -- --in-memory`), so that `npm run rotate-keys` can say
// why it has nothing to do instead of "No running stack found". Each announces itself in a small file under the
// system's temporary folder (nothing in .local/: an in-memory stack keeps nothing there), removed when it stops; a
// file whose process is gone is ignored and removed.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './service-definition.js';

const DIR = join(tmpdir(), 'deployer-in-memory-stacks');

export interface InMemoryStack {
  readonly pid: number;
  readonly port: number;
  /** The checkout it runs from. */
  readonly root: string;
}

/** Whether a process runs (EPERM: it runs, as another user). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Announces this process's in-memory stack; the answer removes the announcement. */
export const announceInMemoryStack = async (port: number): Promise<() => Promise<void>> => {
  const file = join(DIR, `${process.pid}.json`);
  await mkdir(DIR, { recursive: true });
  await writeFile(file, JSON.stringify({ pid: process.pid, port, root: ROOT } satisfies InMemoryStack));
  return () => rm(file, { force: true });
};

/** The in-memory stacks running from this checkout now. */
export const runningInMemoryStacks = async (): Promise<InMemoryStack[]> => {
  const names = await readdir(DIR).catch(() => [] as string[]);
  const stacks: InMemoryStack[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const stack = await readFile(join(DIR, name), 'utf8').then(
      (text) => JSON.parse(text) as InMemoryStack,
      () => undefined,
    );
    if (stack === undefined || !Number.isInteger(stack.pid)) continue;
    if (!alive(stack.pid)) await rm(join(DIR, name), { force: true });
    else if (stack.root === ROOT) stacks.push(stack);
  }
  return stacks;
};
