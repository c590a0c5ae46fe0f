/** Headless Debian Chromium driven by playwright-core (never a downloaded browser). */

import { execSync } from 'node:child_process';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The output of `command -v chromium`, or undefined when it is not installed. */
export function chromiumPath(): string | undefined {
  try {
    const found = execSync('command -v chromium', { encoding: 'utf8', shell: '/bin/sh' }).trim();
    return found || undefined;
  } catch {
    return undefined;
  }
}

/** Playwright gives every launch a fresh temporary --user-data-dir. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    throw new Error('chromium is not installed (apt-get install -y chromium); scripts/test.sh installs it when run as root');
  }
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_FLAGS });
}
