/**
 * Debian's Chromium, driven by playwright-core, for the console's browser tests and its benchmark: playwright's own
 * browser downloads cannot be fetched on this machine. The flags keep it from reaching for Google's hosts at start,
 * which a closed network refuses; playwright gives each launch a fresh profile of its own. A test file that calls
 * launchBrowser( is in the slow tier (test/tiers.mts).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian installs Chromium (`apt-get install -y chromium`); CHROMIUM_PATH overrides it. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
