// Writes src/shared/events.generated.ts from docs/events.schema.json:
// `npm run gen:events` (the generator is scripts/eventTypes.ts, bundled here
// with esbuild). `--check` only says whether the file is up to date.
import { build } from 'esbuild';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = await build({
  entryPoints: [join(root, 'scripts', 'eventTypes.ts')],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'node',
  logLevel: 'warning',
});
const code = bundle.outputFiles[0].text;
const { eventTypesSource, GENERATED_PATH, SCHEMA_PATH } = await import(`data:text/javascript,${encodeURIComponent(code)}`);

const schema = JSON.parse(await readFile(join(root, SCHEMA_PATH), 'utf8'));
const text = eventTypesSource(schema);
const target = join(root, GENERATED_PATH);
if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== text) {
    process.stderr.write(`${GENERATED_PATH} is out of date: run npm run gen:events\n`);
    process.exit(1);
  }
} else {
  await writeFile(target, text);
  process.stdout.write(`wrote ${GENERATED_PATH}\n`);
}
