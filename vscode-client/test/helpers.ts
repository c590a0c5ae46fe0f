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
