/**
 * Generates src/shared/events.generated.ts from docs/events.schema.json (the
 * server's event union, written by `rein schema events --write-docs docs`).
 * Pure: a schema in, the module's text out. scripts/gen-event-types.mjs
 * writes the file; test/unit/eventTypes.test.ts fails when it drifts.
 *
 * Every `$defs` entry becomes an interface. A property is required when the
 * schema requires it or it is a constant (the `type` and `role`
 * discriminators, which the server always sends); every other one is
 * optional, so a server that leaves a defaulted field out breaks nothing.
 */

export interface JsonSchema {
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  description?: string;
  title?: string;
}

export const GENERATED_PATH = 'src/shared/events.generated.ts';
export const SCHEMA_PATH = '../docs/events.schema.json';

const HEADER = `/**
 * The server's events, generated from docs/events.schema.json by
 * \`npm run gen:events\` (scripts/eventTypes.ts). Do not edit: change the
 * event models in server/rein/harness/events.py, run
 * \`rein schema events --write-docs docs\`, then \`npm run gen:events\`.
 * test/unit/eventTypes.test.ts fails when this file and the schema differ.
 */
`;

function literal(value: unknown): string {
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);
}

function refName(ref: string): string {
  const name = ref.split('/').pop() ?? '';
  if (!/^[A-Za-z_]\w*$/.test(name)) {
    throw new Error(`unsupported $ref ${ref}`);
  }
  return name;
}

const PRIMITIVES: Record<string, string> = {
  string: 'string',
  integer: 'number',
  number: 'number',
  boolean: 'boolean',
  null: 'null',
};

function union(parts: string[]): string {
  return [...new Set(parts)].join(' | ');
}

/** The TypeScript type of one schema node. */
export function typeOf(node: JsonSchema): string {
  if (node.const !== undefined) {
    return literal(node.const);
  }
  if (node.enum) {
    return union(node.enum.map(literal));
  }
  if (node.$ref) {
    return refName(node.$ref);
  }
  const alternatives = node.anyOf ?? node.oneOf;
  if (alternatives) {
    return union(alternatives.map((alternative) => typeOf(alternative)));
  }
  if (Array.isArray(node.type)) {
    return union(node.type.map((kind) => typeOf({ ...node, type: kind })));
  }
  switch (node.type) {
    case 'array': {
      const item = node.items ? typeOf(node.items) : 'unknown';
      return /[ |]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case 'object':
      if (node.properties) {
        throw new Error('inline object types are not supported: give them a $defs entry');
      }
      return 'Record<string, unknown>';
    case undefined:
      return 'unknown';
    default: {
      const primitive = PRIMITIVES[node.type];
      if (!primitive) {
        throw new Error(`unsupported schema type ${node.type}`);
      }
      return primitive;
    }
  }
}

function comment(text: string | undefined, indent: string): string[] {
  const words = (text ?? '').split(/\s+/).filter(Boolean);
  if (!words.length) {
    return [];
  }
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + word.length + 1 > 96) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  if (lines.length === 1) {
    return [`${indent}/** ${lines[0] ?? ''} */`];
  }
  return [`${indent}/**`, ...lines.map((l) => `${indent} * ${l}`), `${indent} */`];
}

function interfaceOf(name: string, node: JsonSchema): string[] {
  const required = new Set(node.required ?? []);
  const out = [...comment(node.description, ''), `export interface ${name} {`];
  for (const [prop, schema] of Object.entries(node.properties ?? {})) {
    const optional = !required.has(prop) && schema.const === undefined;
    if (!/^[A-Za-z_]\w*$/.test(prop)) {
      throw new Error(`unsupported property name ${name}.${prop}`);
    }
    out.push(...comment(schema.description, '  '));
    out.push(`  ${prop}${optional ? '?' : ''}: ${typeOf(schema)};`);
  }
  out.push('}');
  return out;
}

/** The event type names, in the union's order, from the discriminator of the top-level oneOf. */
export function eventTypeNames(schema: JsonSchema): string[] {
  const defs = schema.$defs ?? {};
  return (schema.oneOf ?? []).map((member) => {
    const def = defs[refName(member.$ref ?? '')];
    const type = def?.properties?.type?.const;
    if (typeof type !== 'string') {
      throw new Error(`event ${member.$ref ?? '?'} has no constant "type"`);
    }
    return type;
  });
}

export function eventTypesSource(schema: JsonSchema): string {
  const defs = schema.$defs ?? {};
  const members = (schema.oneOf ?? []).map((member) => refName(member.$ref ?? ''));
  if (!members.length) {
    throw new Error('the schema has no oneOf of events');
  }
  const out: string[] = [HEADER];
  for (const name of Object.keys(defs).sort()) {
    out.push(...interfaceOf(name, defs[name] ?? {}), '');
  }
  out.push('/** Every event the server sends on `rein/event`. */');
  out.push('export type ReinEvent =');
  members.forEach((name, index) => out.push(`  | ${name}${index === members.length - 1 ? ';' : ''}`));
  out.push('');
  out.push("export type ReinEventType = ReinEvent['type'];");
  out.push('');
  out.push('/** The `type` of every event, in the order of the schema. */');
  out.push('export const EVENT_TYPES: readonly ReinEventType[] = [');
  for (const type of eventTypeNames(schema)) {
    out.push(`  ${literal(type)},`);
  }
  out.push('];');
  return `${out.join('\n')}\n`;
}
