// Builds the console (console/src, Preact) into static assets: `index.html`, `assets/console-<hash>.js`,
// `assets/console-<hash>.css`, and its icon (`favicon.svg`, also at `favicon.ico`). `npm run build` writes them to dist/ (what the cloud serves from S3 behind
// CloudFront, beside the one-file programs of programs/build.ts); `npm start` builds them in memory at start and
// its front serves them at `/` (local/console-assets.ts).
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { StaticFile as ConsoleAsset } from '../programs/build.js';

const HERE = dirname(fileURLToPath(import.meta.url));

export type { ConsoleAsset };

/** Long-lived caching for a file whose name carries a hash of its contents: a new build has new names. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The console's files by URL path: `/` and `/index.html` (the page, never cached), `/assets/console-<hash>.js` and
 * `/assets/console-<hash>.css` (named by their contents, so cached for a year: after a deploy a browser can never
 * run yesterday's script against today's page), and the icon.
 */
export const buildConsole = async (): Promise<Map<string, ConsoleAsset>> => {
  const result = await build({
    entryPoints: { console: join(HERE, 'src/main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome120', 'firefox120', 'safari17'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: '/assets',
    entryNames: '[name]-[hash]',
    // The pages opened less often are chunks of their own, loaded on the first visit (console/src/lazy.tsx).
    splitting: true,
    chunkNames: 'chunk-[hash]',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    absWorkingDir: HERE,
  });
  const assets = new Map<string, ConsoleAsset>();
  const named = (extension: string) => {
    const file = result.outputFiles.find((f) => f.path.startsWith('/assets/console-') && f.path.endsWith(extension));
    if (file === undefined) throw new Error(`console build: no ${extension} output`);
    return file.path;
  };
  const html = (await readFile(join(HERE, 'index.html'), 'utf8'))
    .replace('/assets/console.css', named('.css'))
    .replace('/assets/console.js', named('.js'));
  const page = { contents: Buffer.from(html), contentType: 'text/html; charset=utf-8', cacheControl: 'no-cache' };
  assets.set('/', page);
  assets.set('/index.html', page); // CloudFront serves `/` as its default root object, /index.html
  // The tab's icon (the page links /favicon.svg; /favicon.ico answers too, for what asks for it without reading the page).
  const icon = { contents: await readFile(join(HERE, 'favicon.svg')), contentType: 'image/svg+xml' };
  assets.set('/favicon.svg', icon);
  assets.set('/favicon.ico', icon);
  for (const file of result.outputFiles) {
    const type = file.path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    assets.set(file.path, { contents: file.contents, contentType: type, cacheControl: IMMUTABLE });
  }
  return assets;
};

const main = async () => {
  const out = join(HERE, '..', 'dist');
  const assets = await buildConsole();
  for (const [path, asset] of assets) {
    if (path === '/index.html') continue; // the same page as `/`, written once
    const file = join(out, path === '/' ? 'index.html' : path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, asset.contents);
    console.log(`${file}  ${(asset.contents.length / 1024).toFixed(1)} KiB`);
  }
};

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
