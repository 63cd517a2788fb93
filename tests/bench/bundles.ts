// Each function's cloud bundle and its module initialisation in a cold process: run.ts's section 3. The build
// options are serverless.yml's custom.esbuild as the framework resolves it for a cloud stage (`ci`), turned into
// esbuild options the way serverless-esbuild does (its plugin-only keys dropped, `exclude` added to `external`,
// `plugins` loaded from the file it names), so the bench builds exactly what `npm run package` ships.
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import { extractDefinition, loadResolvedService, ROOT } from '../../local/service-definition.js';

/** serverless-esbuild's own options (not esbuild's), removed before it calls esbuild (its dist/bundle.js). */
const PLUGIN_ONLY_KEYS = [
  'concurrency',
  'zipConcurrency',
  'exclude',
  'nativeZip',
  'packager',
  'packagePath',
  'watch',
  'keepOutputDirectory',
  'packagerOptions',
  'installExtraArgs',
  'outputFileExtension',
  'outputBuildFolder',
  'outputWorkFolder',
  'nodeExternals',
  'skipBuild',
  'skipRebuild',
  'skipBuildExcludeFns',
  'stripEntryResolveExtensions',
  'disposeContext',
  'config',
];

const strings = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === 'string');

/**
 * esbuild options from a resolved custom.esbuild, as serverless-esbuild builds each function: its defaults
 * (bundle, platform node), the configured options, `external` plus `exclude` (unless `*`), the plugins file loaded.
 */
export const esbuildOptionsOf = (custom: Record<string, unknown>, root: string): BuildOptions => {
  const options: Record<string, unknown> = { bundle: true, platform: 'node', ...custom };
  for (const key of PLUGIN_ONLY_KEYS) delete options[key];
  const exclude = strings(custom['exclude']);
  options['external'] = [...strings(custom['external']), ...(exclude.includes('*') ? [] : exclude)];
  const plugins = custom['plugins'];
  options['plugins'] =
    typeof plugins === 'string' ? (createRequire(join(root, 'package.json'))(join(root, plugins)) as Plugin[]) : [];
  return options as BuildOptions;
};

export interface BundleFigures {
  readonly name: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Module initialisation (the import of the bundle) in fresh processes, ms, sorted. */
  readonly initMs: readonly number[];
  /** The CPU time (user + system) of the same imports, ms, sorted: less sensitive to a busy machine. */
  readonly cpuMs: readonly number[];
  /** The largest parts of the bundle: npm packages (or project folders) by bytes in the output. */
  readonly largest: readonly { readonly part: string; readonly bytes: number }[];
}

/** The npm package (or project folder) of each input of a bundle, by its bytes in the output, largest first. */
export const partsOf = (metafile: Metafile): { part: string; bytes: number }[] => {
  const bytes = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    if (output.entryPoint === undefined) continue;
    for (const [path, input] of Object.entries(output.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
      const part = pkg ?? (path.includes(':') ? path.slice(0, path.indexOf(':')) : `${path.split('/')[0]}/`);
      bytes.set(part, (bytes.get(part) ?? 0) + input.bytesInOutput);
    }
  }
  return [...bytes].map(([part, n]) => ({ part, bytes: n })).sort((a, b) => b.bytes - a.bytes);
};

/**
 * Builds every function of serverless.yml with the cloud options into `out` and imports each bundle in `runs`
 * fresh node processes with the functions' NODE_OPTIONS, timing the import (module initialisation).
 */
export const measureBundles = async (
  out: string,
  runs: number,
  onFunction: (figures: BundleFigures) => void = () => undefined,
): Promise<BundleFigures[]> => {
  const resolved = await loadResolvedService('ci');
  const definition = extractDefinition(resolved);
  const custom = ((resolved['custom'] as Record<string, unknown>)['esbuild'] ?? {}) as Record<string, unknown>;
  const options = esbuildOptionsOf(custom, ROOT);
  const extension = typeof custom['outputFileExtension'] === 'string' ? custom['outputFileExtension'] : '.js';
  const nodeOptions = definition.environment['NODE_OPTIONS'];
  await mkdir(out, { recursive: true });
  const results: BundleFigures[] = [];
  for (const fn of definition.functions) {
    const outfile = join(out, `${fn.name}${extension}`);
    const result = await build({
      ...options,
      entryPoints: [join(ROOT, `${fn.module}.ts`)],
      absWorkingDir: ROOT,
      outfile,
      metafile: true,
      logLevel: 'silent',
    });
    const code = await readFile(outfile);
    const initMs: number[] = [];
    const cpuMs: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      // The Lambda runtime defines awslambda.streamifyResponse before loading a handler; so does this probe.
      const script = `globalThis.awslambda ??= {}; awslambda.streamifyResponse ??= (h) => h;
        const s = performance.now(); const c = process.cpuUsage(); await import(${JSON.stringify(outfile)});
        const u = process.cpuUsage(c); console.log(performance.now() - s, (u.user + u.system) / 1000);`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          PATH: process.env['PATH'],
          AWS_REGION: 'us-east-1',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          NODE_OPTIONS: typeof nodeOptions === 'string' ? nodeOptions : '',
          STAGE: 'ci',
          TABLE_NAME: 't',
          DISPATCH_QUEUE_URL: 'http://127.0.0.1/q',
          ORCHESTRATOR_QUEUE_URL: 'http://127.0.0.1/o',
          ANALYSIS_QUEUE_URL: 'http://127.0.0.1/a',
        },
      });
      const [wall, cpu] = stdout.trim().split(' ').map(Number);
      initMs.push(wall!);
      cpuMs.push(cpu!);
    }
    const figures: BundleFigures = {
      name: fn.name,
      bytes: code.length,
      gzipBytes: gzipSync(code).length,
      initMs: initMs.sort((a, b) => a - b),
      cpuMs: cpuMs.sort((a, b) => a - b),
      largest: partsOf(result.metafile!).slice(0, 5),
    };
    onFunction(figures);
    results.push(figures);
  }
  return results;
};
