// The console's browser tests: Debian's chromium driven by playwright-core, and a page signed in with a password.
import { existsSync } from 'node:fs';
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
