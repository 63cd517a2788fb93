// valibot schema -> fast-check arbitrary of inputs the schema accepts (the property tests' valid values).
//
// It reads the schema objects valibot builds (kind/type/pipe/entries...), covering what the request schemas use:
// string (lengths, regex, uuid, email, ISO timestamps, trim), number (integer, min/max), boolean, picklist,
// object, array, optional, nullable, union, the query strings that become integers (regex + transform(Number) +
// min/max), and `custom` objects of name -> text (the deployment variables). Cross-field checks and any check it
// does not know are left to the caller's filter (`validFor`), which keeps only what the schema itself accepts.
import fc from 'fast-check';
import * as v from 'valibot';

/* eslint-disable @typescript-eslint/no-explicit-any -- valibot's schema objects are read structurally here */
type Node = any;

const ISO_TIMESTAMP = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString());

const VARIABLE_NAME = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,15}$/);

/** Characters an ordinary value is made of, a few odd ones included (quotes, `<`, non-Latin, an emoji). */
const TEXT_CHAR = fc.constantFrom(...'abcXYZ019 -_.:/<>"\'&é漢😀'.split(/(?=[\s\S])/u));
const text = (min: number, max: number) =>
  fc.string({ unit: TEXT_CHAR, minLength: min, maxLength: Math.min(max, min + 24) });

const actionsOf = (node: Node): Node[] => (Array.isArray(node.pipe) ? node.pipe.slice(1) : []);
const find = (actions: Node[], type: string): Node | undefined => actions.find((a) => a.type === type);

const stringArbitrary = (actions: Node[]): fc.Arbitrary<string> => {
  const min = find(actions, 'min_length')?.requirement ?? find(actions, 'length')?.requirement ?? 0;
  const max = find(actions, 'max_length')?.requirement ?? find(actions, 'length')?.requirement ?? Math.max(min, 24);
  const regex = find(actions, 'regex')?.requirement as RegExp | undefined;
  // A query integer: regex of digits, then transform(Number), then the range on the number.
  const transformAt = actions.findIndex((a) => a.type === 'transform');
  if (transformAt !== -1 && regex !== undefined && /\\d/.test(regex.source)) {
    const after = actions.slice(transformAt + 1);
    const low = find(after, 'min_value')?.requirement ?? -1000;
    const high = find(after, 'max_value')?.requirement ?? 1000;
    return fc.integer({ min: low, max: high }).map(String);
  }
  if (find(actions, 'uuid') !== undefined) return fc.uuid({ version: 4 });
  if (find(actions, 'email') !== undefined)
    return fc
      .tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/), fc.constantFrom('example.com', 'test.org'))
      .map(([l, d]) => `${l}@${d}`);
  // iso_timestamp, or a check whose message asks for an ISO 8601 date-time (tenancy's DateTime)
  if (
    find(actions, 'iso_timestamp') !== undefined ||
    actions.some((a) => a.type === 'check' && /ISO 8601/.test(String(a.message)))
  )
    return ISO_TIMESTAMP;
  if (regex !== undefined)
    return fc
      .stringMatching(new RegExp(regex.source, regex.flags.replace('i', '')))
      .filter((s) => s.length >= min && s.length <= max);
  const trimmed = find(actions, 'trim') !== undefined;
  const base = text(trimmed ? Math.max(min, 1) : min, max);
  return trimmed ? base.map((s) => s.trim()).filter((s) => s.length >= min && s.length <= max) : base;
};

const numberArbitrary = (actions: Node[]): fc.Arbitrary<number> => {
  const min = find(actions, 'min_value')?.requirement ?? -1e6;
  const max = find(actions, 'max_value')?.requirement ?? 1e6;
  if (find(actions, 'integer') !== undefined) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
};

const arrayArbitrary = (node: Node, actions: Node[], depth: number): fc.Arbitrary<unknown[]> => {
  const min = find(actions, 'min_length')?.requirement ?? 0;
  const max = find(actions, 'max_length')?.requirement ?? 4;
  return fc.array(arbitraryOf(node.item, depth + 1), { minLength: min, maxLength: Math.min(max, min + 4) });
};

const objectArbitrary = (node: Node, depth: number): fc.Arbitrary<Record<string, unknown>> => {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  const required: string[] = [];
  for (const [key, entry] of Object.entries<Node>(node.entries)) {
    if (entry.type === 'optional' && entry.wrapped.type === 'never') continue; // a field that must not be given
    model[key] = arbitraryOf(entry, depth + 1);
    if (!['optional', 'exact_optional', 'nullish', 'undefinedable'].includes(entry.type)) required.push(key);
  }
  return fc.record(model, { requiredKeys: required });
};

/** An arbitrary of values `node` accepts (mostly: see `validFor` for the checks it cannot know). */
export const arbitraryOf = (node: Node, depth = 0): fc.Arbitrary<unknown> => {
  const base: Node = Array.isArray(node.pipe) ? node.pipe[0] : node;
  const actions = actionsOf(node);
  switch (base.type) {
    case 'string':
      return stringArbitrary(actions);
    case 'number':
      return numberArbitrary(actions);
    case 'boolean':
      return fc.boolean();
    case 'literal':
      return fc.constant(base.literal);
    case 'picklist':
      return fc.constantFrom(...(base.options as unknown[]));
    case 'enum':
      return fc.constantFrom(...(base.options as unknown[]));
    case 'optional':
    case 'exact_optional':
    case 'undefinedable':
      return arbitraryOf(base.wrapped, depth);
    case 'nullable':
    case 'nullish':
      return fc.option(arbitraryOf(base.wrapped, depth), { nil: null, freq: 4 });
    case 'union':
    case 'variant':
      return fc.oneof(...(base.options as Node[]).map((o) => arbitraryOf(o, depth + 1)));
    case 'object':
    case 'loose_object':
    case 'strict_object':
      return objectArbitrary(base, depth);
    case 'array':
      return arrayArbitrary(base, actions, depth);
    case 'record':
      return fc.dictionary(
        arbitraryOf(base.key, depth + 1) as fc.Arbitrary<string>,
        arbitraryOf(base.value, depth + 1),
        { maxKeys: 4 },
      );
    case 'custom':
      // The only custom schema of the request bodies: an object of variable name -> text.
      return fc.dictionary(VARIABLE_NAME, fc.oneof(text(0, 24), fc.integer(), fc.boolean()), { maxKeys: 4 });
    case 'unknown':
    case 'any':
      return fc.jsonValue({ maxDepth: 2 });
    default:
      throw new Error(`valibot-arbitrary: no generator for schema type '${String(base.type)}'`);
  }
};

/** The arbitrary of `schema`, keeping only values the whole schema (cross-field checks included) accepts. */
export const validFor = (schema: v.GenericSchema): fc.Arbitrary<unknown> =>
  arbitraryOf(schema).filter((value) => v.safeParse(schema, value).success);

/** The object entries of a schema (through pipes and optional wrappers), or none. */
export const entriesOf = (schema: Node): Record<string, v.GenericSchema> => {
  if (schema.entries !== undefined) return schema.entries;
  const inner = Array.isArray(schema.pipe) ? schema.pipe[0] : schema.wrapped;
  return inner === undefined || inner === schema ? {} : entriesOf(inner);
};
