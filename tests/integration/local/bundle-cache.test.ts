// The local stack's bundle cache: bundles kept after a build are found again by the same key, linked (not copied)
// into another work folder, and survive that folder.
import { randomUUID } from 'node:crypto';
import { lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundleKey, keepBundles, useCachedBundles } from '../../../local/bundle-cache.js';
import { ROOT } from '../../../local/service-definition.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(join(ROOT, dir), { recursive: true, force: true })));
});

describe('the bundle cache', () => {
  it('gives the same key for the same sources', async () => {
    const [first, second] = await Promise.all([bundleKey(), bundleKey()]);
    expect(first).toMatch(/^[0-9a-f]{20}$/);
    expect(second).toBe(first);
  });

  it('finds nothing for an unknown key, then links what a build kept into another work folder', async () => {
    // Prepare: a work folder as serverless-esbuild leaves it, under a key no real build has
    const key = `test${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    const built = join('.build', `offline-test-${key}`);
    const next = join('.build', `offline-test-${key}-next`);
    made.push(built, next, join('.build', `bundles-${key}`));
    await mkdir(join(ROOT, built, '.build', 'functions'), { recursive: true });
    await writeFile(join(ROOT, built, '.build', 'functions', 'meta.mjs'), 'export const handler = 1;\n');
    // Act / Assess
    expect(await useCachedBundles(key, next)).toBe(false);
    await keepBundles(key, built);
    await rm(join(ROOT, built), { recursive: true }); // the first stack stopped
    expect(await useCachedBundles(key, next)).toBe(true);
    expect((await lstat(join(ROOT, next, '.build'))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(ROOT, next, '.build', 'functions', 'meta.mjs'), 'utf8')).toBe(
      'export const handler = 1;\n',
    );
    // Removing the work folder leaves the kept bundles for the next stack
    await rm(join(ROOT, next), { recursive: true });
    expect(await useCachedBundles(key, next)).toBe(true);
  });
});
