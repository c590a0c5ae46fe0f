import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EventEnvelope } from '../src/shared/protocol';

/** vscode-client/, from out/test/<kind>/x.test.js or out/e2e/x.test.js. */
export const ROOT = (() => {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) || !fs.existsSync(path.join(dir, 'src', 'extension.ts'))) {
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`vscode-client root not found above ${__dirname}`);
    }
    dir = parent;
  }
  return dir;
})();

export const REPO = path.dirname(ROOT);

export function loadEvents(name = 'run-fix-calc.jsonl'): EventEnvelope[] {
  const text = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', name), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as EventEnvelope);
}

/** Where tests save their screenshots (gitignored); `make screenshots` copies them to docs/images. */
export const SCREENSHOTS = path.join(ROOT, 'build', 'screenshots');

/** The path of screenshot `name` under build/screenshots (the folder is made). */
export function screenshotPath(name: string): string {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, name);
}

/** Width and height of a PNG file (from its IHDR chunk). */
export function pngSize(file: string): { width: number; height: number } {
  const data = fs.readFileSync(file);
  if (data.length < 24 || data.toString('latin1', 1, 4) !== 'PNG' || data.toString('latin1', 12, 16) !== 'IHDR') {
    throw new Error(`${file} is not a PNG`);
  }
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** Every string of l10n/bundle.l10n.json as "[xx] …": a bundle that makes translated text visible. */
export function pseudoBundle(): Record<string, string> {
  const english = JSON.parse(fs.readFileSync(path.join(ROOT, 'l10n', 'bundle.l10n.json'), 'utf8')) as Record<string, string>;
  return Object.fromEntries(Object.keys(english).map((key) => [key, `[xx] ${key}`]));
}
