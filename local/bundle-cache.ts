// The local stack's function bundles, kept by the content of what goes into them: a serverless-offline started on
// sources it has already bundled reuses those bundles instead of running esbuild over every function again (about
// 5 CPU-seconds a start; the test run starts dozens of stacks). local/serverless-prebuilt.cjs tells
// serverless-esbuild to build nothing when the bundles are in place. `npm start -- --watch` builds as always.
import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rename, rm, stat, symlink, utimes } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ROOT } from './service-definition.js';

/** Everything esbuild may read for a function, and what decides how it bundles. */
const SOURCE_DIRS = ['functions', 'domain', 'infra', 'local', 'agent', 'protocol'];
const SOURCE_FILES = ['serverless.yml', 'package-lock.json', 'tsconfig.json'];
const SOURCE_EXTENSION = /\.(ts|tsx|js|cjs|mjs|json|yml)$/;
/** Bundles of other sources are removed once this old (a run in progress may still use one), keeping the newest. */
const KEEP_MS = 3_600_000;
const KEEP_NEWEST = 3;
const CACHE_DIR = join(ROOT, '.build');
const PREFIX = 'bundles-';

const filesUnder = async (dir: string): Promise<string[]> => {
  const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile() && SOURCE_EXTENSION.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
};

/** A digest of every source file's path and content. */
export const bundleKey = async (): Promise<string> => {
  const hash = createHash('sha256');
  const files = [...SOURCE_FILES, ...(await Promise.all(SOURCE_DIRS.map(filesUnder))).flat()];
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(await readFile(join(ROOT, file)).catch(() => Buffer.alloc(0)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 20);
};

/** The cached bundles' folder: `<it>/.build` matches a work folder's `.build` (same depth, so source maps hold). */
const entryOf = (key: string) => join(CACHE_DIR, `${PREFIX}${key}`);

/**
 * Puts the cached bundles of `key` into `workFolder` (relative to the project) as its `.build`: a link, so nothing
 * is copied. False when there are none yet.
 */
export const useCachedBundles = async (key: string, workFolder: string): Promise<boolean> => {
  const entry = entryOf(key);
  if (
    !(await stat(join(entry, '.build')).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return false;
  const target = join(ROOT, workFolder);
  await mkdir(target, { recursive: true });
  await symlink(join(entry, '.build'), join(target, '.build'), 'dir');
  const now = new Date();
  await utimes(entry, now, now).catch(() => undefined); // in use: not pruned
  return true;
};

/** Keeps the bundles serverless-esbuild just built in `workFolder` for the next start on the same sources. */
export const keepBundles = async (key: string, workFolder: string): Promise<void> => {
  const entry = entryOf(key);
  if (
    await stat(entry).then(
      () => true,
      () => false,
    )
  )
    return;
  const staging = `${entry}.staging-${process.pid}-${Date.now()}`;
  try {
    await cp(join(ROOT, workFolder, '.build'), join(staging, '.build'), { recursive: true });
    await rename(staging, entry); // another stack may have kept the same bundles first: then this one fails
  } catch {
    // Nothing lost: the next start builds again.
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  await prune(key);
};

const prune = async (keep: string): Promise<void> => {
  const names = (await readdir(CACHE_DIR).catch(() => [] as string[])).filter(
    (n) => n.startsWith(PREFIX) && n !== `${PREFIX}${keep}`,
  );
  const dated = await Promise.all(
    names.map(async (name) => ({ name, mtime: (await stat(join(CACHE_DIR, name)).catch(() => undefined))?.mtimeMs })),
  );
  const old = dated
    .filter((d): d is { name: string; mtime: number } => d.mtime !== undefined)
    .sort((a, b) => b.mtime - a.mtime)
    .slice(KEEP_NEWEST - 1)
    .filter((d) => Date.now() - d.mtime > KEEP_MS);
  await Promise.all(old.map((d) => rm(join(CACHE_DIR, d.name), { recursive: true, force: true })));
};
