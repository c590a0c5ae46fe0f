/**
 * The l10n bundle (l10n/bundle.l10n.json) holds exactly the strings the
 * extension (src/, vscode.l10n.t) and the panel's page (webview/, l10n.t of
 * @vscode/l10n) use: a string added without `npm run l10n` fails here.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { chatHtml } from '../../src/panel/chatView';
import { ROOT } from '../helpers';

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

describe('localization', () => {
  it('commits a bundle with every string that src/ and webview/ translate, and no other', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rein-l10n-'));
    try {
      const cli = path.join(ROOT, 'node_modules', '.bin', 'vscode-l10n-dev');
      const run = spawnSync(cli, ['export', '--outDir', out, './src', './webview'], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(run.status, 0, `vscode-l10n-dev export failed: ${run.stderr}`);
      const fresh = readJson(path.join(out, 'bundle.l10n.json'));
      const committed = readJson(path.join(ROOT, 'l10n', 'bundle.l10n.json'));
      const missing = Object.keys(fresh).filter((key) => !(key in committed));
      const stale = Object.keys(committed).filter((key) => !(key in fresh));
      assert.deepEqual({ missing, stale }, { missing: [], stale: [] }, 'l10n/bundle.l10n.json is out of date: run `npm run l10n`');
      // The panel's own strings are in it (webview/), not only the extension's.
      for (const key of ['Ask Rein to change something…', 'Repair attempt {0} of {1}', 'From the settings (rein.model)']) {
        assert.ok(key in committed, key);
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('points the manifest at the bundles and ships them', () => {
    const manifest = readJson(path.join(ROOT, 'package.json'));
    assert.equal(manifest.l10n, './l10n');
    const ignore = fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8');
    assert.match(ignore, /^!l10n\/\*\.json$/m);
  });

  it("gives the page the bundle as a data attribute (no inline script) and the editor's language", () => {
    const bundle = { 'Send': 'Senden', 'a "quoted" <b>&</b>': 'x' };
    const html = chatHtml({ cspSource: 'c' }, 'main.js', 'panel.css', 'N0NCE', { language: 'de', bundle });
    assert.match(html, /<html lang="de">/);
    const attr = /<div id="app" data-l10n="([^"]*)"><\/div>/.exec(html)?.[1];
    assert.ok(attr, 'the #app element carries data-l10n');
    const decoded = attr.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    assert.deepEqual(JSON.parse(decoded), bundle);
    assert.equal(html.match(/<script/g)?.length, 1, 'only the nonce script');
    // English: no bundle, no attribute.
    assert.match(chatHtml({ cspSource: 'c' }, 'main.js', 'panel.css', 'N0NCE'), /<html lang="en">[\s\S]*<div id="app"><\/div>/);
  });
});
