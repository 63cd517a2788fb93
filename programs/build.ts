// Builds the one-file programs the service hands out (docs/decisions.md, "One-file programs"): the agent
// (`agent/main.ts` -> `deployer-agent.mjs`) and the command line (`cli/main.ts` -> `deployer.mjs`), each an esbuild
// bundle (ESM, Node 22+, no node_modules) with its SHA-256 and its install script. One build for every use:
// `npm run build:agent` / `build:cli` write them to dist/agent and dist/cli, `npm run build` writes them beside the
// console in dist/ (what the cloud uploads to the console bucket), and `npm start` builds them in memory and its front
// serves them (local/console-assets.ts).
//
// Paths served, per program (`agent`: deployer-agent.mjs; `cli`: deployer.mjs):
//   /<program>/<file>              the current build, `cache-control: no-cache`, `x-deployer-version` header
//   /<program>/<file>.sha256       its checksum, `<hex>  <file>` as sha256sum prints it (no-cache)
//   /<program>/v<version>/<hash>/<file>  the same bytes under their version and the first 16 hex digits of their
//                                  SHA-256, cached for a year (immutable): a rebuild of the same version is a new path
//   /<program>/manifest.json       {name, version, sha256, size, path} (no-cache)
//   /<program>/install.sh          the install script, with the version, checksum and server filled in (no-cache)
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A file served as it is (the console's, the programs'). */
export interface StaticFile {
  readonly contents: Uint8Array;
  readonly contentType: string;
  /** The cache-control header; the console's rule (local/console-assets.ts) when absent. */
  readonly cacheControl?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export type ProgramName = 'agent' | 'cli';

export interface ProgramRelease {
  readonly name: ProgramName;
  /** The file's name: deployer-agent.mjs, deployer.mjs. */
  readonly file: string;
  readonly version: string;
  /** Hex SHA-256 of the bundle. */
  readonly sha256: string;
  readonly size: number;
  /**
   * The versioned path the bundle is served at (`/agent/v1.0.0/<first 16 hex digits of sha256>/deployer-agent.mjs`):
   * named by its contents as well as its version, so a cache holding it a year can never hand out older bytes of the
   * same version (a rebuild without a version bump), which the install script's checksum would then refuse.
   */
  readonly path: string;
}

interface ProgramSource {
  readonly entry: string;
  readonly file: string;
  /** The module exporting the program's version (`export const X = '1.2.3'`). */
  readonly versionModule: string;
  /** The install script template (placeholders `@@VERSION@@`, `@@SHA256@@`, `@@FILE@@`, `@@SERVER@@`); optional. */
  readonly installScript: string;
}

export const PROGRAMS: Readonly<Record<ProgramName, ProgramSource>> = {
  agent: {
    entry: 'agent/main.ts',
    file: 'deployer-agent.mjs',
    versionModule: 'agent/version.ts',
    installScript: 'agent/install.sh',
  },
  cli: {
    entry: 'cli/main.ts',
    file: 'deployer.mjs',
    versionModule: 'cli/version.ts',
    installScript: 'cli/install.sh',
  },
};

const NO_CACHE = 'no-cache';
/** How many hex digits of the bundle's SHA-256 its versioned path carries (64 bits). */
const CONTENT_HASH_DIGITS = 16;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const JS = 'text/javascript; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';

const readVersion = async (module: string): Promise<string> => {
  const text = await readFile(join(ROOT, module), 'utf8');
  const match = /=\s*'(\d+\.\d+\.\d+[^']*)'/.exec(text);
  if (match?.[1] === undefined) throw new Error(`${module}: no version literal found`);
  return match[1];
};

/**
 * The bundle's bytes: one ESM file for Node 22+, runnable as `node <file>` (and as `./<file>`: it has a shebang).
 * `version` replaces the literal of its version module (tests build a release newer than the sources).
 */
export const bundleProgram = async (name: ProgramName, version?: string): Promise<Uint8Array> => {
  const source = PROGRAMS[name];
  const versionFile = join(ROOT, source.versionModule);
  const result = await build({
    plugins:
      version === undefined
        ? []
        : [
            {
              name: 'version',
              setup: (b) =>
                b.onLoad({ filter: /version\.ts$/ }, async (args) =>
                  args.path === versionFile
                    ? {
                        contents: (await readFile(versionFile, 'utf8')).replace(/'\d+\.\d+\.\d+[^']*'/, `'${version}'`),
                        loader: 'ts',
                      }
                    : undefined,
                ),
            },
          ],
    entryPoints: [join(ROOT, source.entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    keepNames: true,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    banner: { js: '#!/usr/bin/env node' },
    absWorkingDir: ROOT,
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error(`${source.entry}: esbuild wrote nothing`);
  return output.contents;
};

const sha256 = (contents: Uint8Array) => createHash('sha256').update(contents).digest('hex');

/** Fills an install script's placeholders; every one must be known. */
const fillScript = (template: string, values: Readonly<Record<string, string>>): string =>
  template.replace(/@@([A-Z0-9_]+)@@/g, (whole, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`install script: unknown placeholder ${whole}`);
    return value;
  });

export interface BuiltProgram {
  readonly release: ProgramRelease;
  /** Served paths -> files. */
  readonly files: ReadonlyMap<string, StaticFile>;
}

/**
 * Builds one program and the files served for it. `server` is the service's public URL the install script uses when
 * it is not given `--server` (PUBLIC_BASE_URL; empty: the script requires `--server`).
 */
export const buildProgram = async (
  name: ProgramName,
  options: { server?: string; version?: string } = {},
): Promise<BuiltProgram> => {
  const source = PROGRAMS[name];
  const [contents, version] = await Promise.all([
    bundleProgram(name, options.version),
    options.version ?? readVersion(source.versionModule),
  ]);
  const hex = sha256(contents);
  const release: ProgramRelease = {
    name,
    file: source.file,
    version,
    sha256: hex,
    size: contents.length,
    path: `/${name}/v${version}/${hex.slice(0, CONTENT_HASH_DIGITS)}/${source.file}`,
  };
  const versionHeader = { 'x-deployer-version': version };
  const files = new Map<string, StaticFile>();
  files.set(`/${name}/${source.file}`, { contents, contentType: JS, cacheControl: NO_CACHE, headers: versionHeader });
  files.set(release.path, { contents, contentType: JS, cacheControl: IMMUTABLE, headers: versionHeader });
  files.set(`/${name}/${source.file}.sha256`, {
    contents: Buffer.from(`${hex}  ${source.file}\n`),
    contentType: TEXT,
    cacheControl: NO_CACHE,
    headers: versionHeader,
  });
  files.set(`/${name}/manifest.json`, {
    contents: Buffer.from(`${JSON.stringify(release, null, 2)}\n`),
    contentType: 'application/json',
    cacheControl: NO_CACHE,
    headers: versionHeader,
  });
  const script = join(ROOT, source.installScript);
  if (existsSync(script)) {
    const text = fillScript(await readFile(script, 'utf8'), {
      VERSION: version,
      SHA256: hex,
      FILE: source.file,
      PATH: release.path,
      SERVER: (options.server ?? '').replace(/\/+$/, ''),
    });
    files.set(`/${name}/install.sh`, {
      contents: Buffer.from(text),
      contentType: 'text/x-shellscript; charset=utf-8',
      cacheControl: NO_CACHE,
      headers: versionHeader,
    });
  }
  return { release, files };
};

/** Writes a program's files under `out` (`out/agent/...`), as the cloud's bucket holds them. */
export const writeProgram = async (built: BuiltProgram, out: string): Promise<void> => {
  for (const [path, file] of built.files) {
    const target = join(out, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.contents, { mode: path.endsWith('.mjs') || path.endsWith('.sh') ? 0o755 : 0o644 });
  }
};

/** The programs whose sources are in this checkout. */
export const programNames = (): ProgramName[] =>
  (Object.keys(PROGRAMS) as ProgramName[]).filter((name) => existsSync(join(ROOT, PROGRAMS[name].entry)));

/**
 * Every program's files, for a front to serve (`npm start`), and their releases. `versions`: a program built as
 * another version than its sources say (tests of the agent's update).
 */
export const buildPrograms = async (
  options: { server?: string; versions?: Partial<Record<ProgramName, string>> } = {},
) => {
  const built = await Promise.all(
    programNames().map((name) =>
      buildProgram(name, {
        ...(options.server === undefined ? {} : { server: options.server }),
        ...(options.versions?.[name] === undefined ? {} : { version: options.versions[name] }),
      }),
    ),
  );
  const files = new Map<string, StaticFile>();
  for (const program of built) for (const [path, file] of program.files) files.set(path, file);
  return {
    files,
    releases: Object.fromEntries(built.map((b) => [b.release.name, b.release])) as Partial<
      Record<ProgramName, ProgramRelease>
    >,
  };
};

const main = async () => {
  const names = process.argv.slice(2) as ProgramName[];
  const out = join(ROOT, 'dist');
  for (const name of names.length === 0 ? programNames() : names) {
    if (!(name in PROGRAMS)) throw new Error(`unknown program '${name}' (agent or cli)`);
    const built = await buildProgram(name, { server: process.env['PUBLIC_BASE_URL'] ?? '' });
    await writeProgram(built, out);
    const { release } = built;
    console.log(
      `${join(out, name, release.file)}  ${release.version}  ${(release.size / 1024).toFixed(1)} KiB  sha256 ${release.sha256}`,
    );
  }
};

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
