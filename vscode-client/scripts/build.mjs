// Bundles the extension (Node, CommonJS) and the chat webview (browser, IIFE)
// with esbuild; with --tests also the test files (the `vscode` module swapped
// for test/stub/vscode.ts). Flags: --production (minified, no source maps),
// --tests.
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

const common = {
  bundle: true,
  logLevel: 'warning',
  sourcemap: production ? false : 'linked',
  minify: production,
  absWorkingDir: root,
};

await rm(join(root, 'dist'), { recursive: true, force: true });
await mkdir(join(root, 'dist', 'webview'), { recursive: true });

const jobs = [
  build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  }),
  build({
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview/main.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  }),
  copyFile(join(root, 'webview', 'panel.css'), join(root, 'dist', 'webview', 'panel.css')),
];

async function testEntries(dir) {
  const entries = await readdir(join(root, dir)).catch(() => []);
  return entries.filter((name) => name.endsWith('.test.ts')).map((name) => `${dir}/${name}`);
}

if (tests) {
  await rm(join(root, 'out'), { recursive: true, force: true });
  const entryPoints = [
    ...(await testEntries('test/unit')),
    ...(await testEntries('test/webview')),
    ...(await testEntries('e2e')),
  ];
  jobs.push(
    build({
      ...common,
      sourcemap: 'inline',
      minify: false,
      entryPoints,
      outdir: 'out',
      outbase: '.',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      alias: { vscode: './test/stub/vscode.ts' },
      external: ['playwright-core', 'esbuild'],
    }),
    // The e2e test's stand-in Python analyzer, packaged by the e2e harness.
    build({
      ...common,
      sourcemap: false,
      entryPoints: ['e2e/analyzer/extension.ts'],
      outfile: 'out/e2e/analyzer/extension.js',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['vscode'],
    }).then(() => copyFile(join(root, 'e2e', 'analyzer', 'package.json'), join(root, 'out', 'e2e', 'analyzer', 'package.json'))),
    // The e2e test's scripted language model (provider vscode-lm), packaged by the e2e harness.
    build({
      ...common,
      sourcemap: false,
      entryPoints: ['e2e/lm-provider/extension.ts'],
      outfile: 'out/e2e/lm-provider/extension.js',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['vscode'],
    }).then(() => copyFile(join(root, 'e2e', 'lm-provider', 'package.json'), join(root, 'out', 'e2e', 'lm-provider', 'package.json'))),
  );
}

await Promise.all(jobs);
