import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from '../helpers';

/** The lint's import-circle check (`npm run lint:cycles`) with its own config, on the given folders. */
function cruise(...folders: string[]): { status: number | null; output: string } {
  const bin = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const result = spawnSync(process.execPath, [bin, '--config', '.dependency-cruiser.mjs', ...folders], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rein-cycles-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A folder of TypeScript modules, name -> source. */
function project(name: string, files: Record<string, string>): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  for (const [file, source] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, file), source);
  }
  return dir;
}

describe('the import-circle check in npm run lint', () => {
  it('is part of npm run lint and of scripts/test.sh', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.match(pkg.scripts['lint'] ?? '', /npm run -s lint:cycles/);
    assert.match(pkg.scripts['lint:cycles'] ?? '', /^depcruise --config \.dependency-cruiser\.mjs src webview$/);
    assert.match(fs.readFileSync(path.join(ROOT, 'scripts', 'test.sh'), 'utf8'), /\nnpm run -s lint:cycles\n/);
  });

  it('fails on a circle closed only by an `import type` edge, and on a longer one of value imports, naming each', () => {
    // The shape the extension had: the client hands itself to a feature that imports its type back.
    const typeCycle = project('typeCycle', {
      'client.ts': "import { registerSave } from './save';\nexport class Client {}\nregisterSave(new Client());\n",
      'save.ts': "import type { Client } from './client';\nexport function registerSave(_client: Client): void {}\n",
    });
    const valueCycle = project('valueCycle', {
      'a.ts': "import { b } from './b';\nexport const a = (): number => b() + 1;\n",
      'b.ts': "import { c } from './c';\nexport const b = (): number => c() + 1;\n",
      'c.ts': "import { a } from './a';\nexport const c = (): number => (Math.random() > 2 ? a() : 0);\n",
    });
    const { status, output } = cruise(typeCycle, valueCycle);
    assert.notEqual(status, 0, output);
    assert.match(output, /error no-circular: \S*typeCycle\/(client|save)\.ts/);
    assert.match(output, /error no-circular: \S*valueCycle\/[abc]\.ts/);
    assert.match(output, /2 dependency violations \(2 errors/);
  });

  it('passes the same modules once the feature takes a narrow interface from its own module', () => {
    const dir = project('narrow', {
      'client.ts': "import { registerSave, type Connection } from './save';\nexport class Client implements Connection {}\nregisterSave(new Client());\n",
      'save.ts': 'export interface Connection {}\nexport function registerSave(_connection: Connection): void {}\n',
    });
    const { status, output } = cruise(dir);
    assert.equal(status, 0, output);
    assert.match(output, /no dependency violations found/);
  });
});
