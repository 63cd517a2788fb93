// The console's browser tests: Debian's chromium driven by playwright-core, a page signed in with a password, and
// axe-core's check of a page.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** The browser; without one the test fails (`apt-get install chromium`, or set CHROMIUM_PATH). */
export const launchChromium = async (): Promise<Browser> => {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH).`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
};

/** A new context's page signed in through the console's form, on the deployments page. */
export const signInPage = async (
  browser: Browser,
  baseUrl: string,
  user: { email: string; password: string },
  options: BrowserContextOptions = { viewport: { width: 1100, height: 900 } },
): Promise<Page> => {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  await page.goto(baseUrl);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Deployments' }).waitFor();
  return page;
};

interface Violation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: { target: unknown[] }[];
}

/** axe-core's own file, from the npm package (nothing is fetched at run time). */
let axeSource: Promise<string> | undefined;

/**
 * axe's serious and critical violations on the page as it is, as `rule: help (elements)` lines. axe is evaluated in
 * the page through the debugging protocol, which the console's CSP (no inline script) does not govern.
 * AXE_ALL=1 prints every violation, whatever its impact.
 */
export const seriousViolations = async (page: Page): Promise<string[]> => {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(await axeSource);
  const results = (await page.evaluate(
    'window.axe.run(document).then((r) => ({ violations: r.violations, passes: r.passes.length }))',
  )) as { violations: Violation[]; passes: number };
  if (process.env['AXE_ALL'] !== undefined)
    console.log(
      page.url(),
      results.violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.length}`),
    );
  if (results.passes <= 10) throw new Error(`axe checked almost nothing on ${page.url()}`);
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')})`);
};
