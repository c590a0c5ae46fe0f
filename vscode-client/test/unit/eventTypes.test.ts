import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { eventTypeNames, eventTypesSource, GENERATED_PATH, SCHEMA_PATH, typeOf, type JsonSchema } from '../../scripts/eventTypes';
import { EVENT_TYPES, type ReinEvent } from '../../src/shared/events.generated';
import { isKnownEvent } from '../../src/shared/protocol';
import { PanelState } from '../../src/panel/reducer';
import { loadEvents, ROOT } from '../helpers';

function schema(): JsonSchema {
  return JSON.parse(fs.readFileSync(path.join(ROOT, SCHEMA_PATH), 'utf8')) as JsonSchema;
}

/** Compile-time check: `tsc --noEmit` (strict) fails when a case names an event the server does not send. */
export function describeEvent(event: ReinEvent): string {
  switch (event.type) {
    // @ts-expect-error auto_repair_started is not in the schema's union: the compiler refuses the case.
    case 'auto_repair_started':
      return 'never sent';
    case 'auto_repair':
      return `auto-repair ${event.phase}`;
    default:
      return event.type;
  }
}

describe('the event types generated from docs/events.schema.json', () => {
  it('are what the generator makes of the schema now (run `npm run gen:events` when this fails)', () => {
    const committed = fs.readFileSync(path.join(ROOT, GENERATED_PATH), 'utf8');
    assert.equal(committed, eventTypesSource(schema()), `${GENERATED_PATH} drifted from ${SCHEMA_PATH}`);
  });

  it('list every event of the schema, and nothing else', () => {
    const mapping = Object.keys((schema() as { discriminator?: { mapping?: Record<string, string> } }).discriminator?.mapping ?? {});
    assert.ok(mapping.length > 20);
    assert.deepEqual([...EVENT_TYPES].sort(), mapping.sort());
    assert.deepEqual(eventTypeNames(schema()), [...EVENT_TYPES]);
    assert.ok(!EVENT_TYPES.some((type) => type.startsWith('auto_repair_')), 'the split auto-repair names are not events');
  });

  it('change when the schema changes: a new event and a new field show up', () => {
    const changed = schema();
    changed.$defs = {
      ...changed.$defs,
      Wobble: {
        description: 'A test-only event.',
        properties: { size: { type: 'integer' }, type: { const: 'wobble' }, why: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
        required: ['size'],
      },
    };
    changed.oneOf = [...(changed.oneOf ?? []), { $ref: '#/$defs/Wobble' }];
    const text = eventTypesSource(changed);
    assert.notEqual(text, eventTypesSource(schema()));
    assert.match(text, /\/\*\* A test-only event\. \*\/\nexport interface Wobble \{\n {2}size: number;\n {2}type: 'wobble';\n {2}why\?: string \| null;\n\}/);
    assert.match(text, /\| ErrorEvent\n {2}\| Wobble;/);
    assert.match(text, /'error',\n {2}'wobble',\n\];/);
  });

  it('map the schema\'s constructs to TypeScript', () => {
    assert.equal(typeOf({ const: "it's" }), "'it\\'s'");
    assert.equal(typeOf({ enum: ['a', 'b'] }), "'a' | 'b'");
    assert.equal(typeOf({ type: 'array', items: { $ref: '#/$defs/Blocker' } }), 'Blocker[]');
    assert.equal(typeOf({ type: 'array', items: { oneOf: [{ $ref: '#/$defs/A' }, { $ref: '#/$defs/B' }] } }), '(A | B)[]');
    assert.equal(typeOf({ anyOf: [{ type: 'integer' }, { type: 'null' }] }), 'number | null');
    assert.equal(typeOf({ type: 'object', additionalProperties: true }), 'Record<string, unknown>');
    assert.equal(typeOf({ type: ['string', 'null'] }), 'string | null');
    assert.throws(() => typeOf({ type: 'object', properties: { x: { type: 'string' } } }), /inline object/);
    assert.throws(() => eventTypesSource({ $defs: {} }), /no oneOf/);
  });

  it('cover every event of the recorded runs, which the panel renders', () => {
    const recorded = [...loadEvents(), ...loadEvents('plan-preview.jsonl')].map((envelope) => envelope.event);
    // run-fix-calc.jsonl carries one made-up type, to show the panel ignores what it does not know.
    assert.deepEqual(
      recorded.filter((event) => !isKnownEvent(event)).map((event) => event.type),
      ['a_future_event'],
    );
    const state = new PanelState('s');
    assert.deepEqual(
      recorded.filter((event) => !state.apply(event)).map((event) => event.type),
      ['a_future_event'],
    );
  });
});
