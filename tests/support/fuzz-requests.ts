// The requests of the project's HTTP fuzzer (tests/support/fuzz.ts): the operations of the served OpenAPI document,
// a seeded random source, plausible values from the operations' schemas, and per operation the plausible request
// and its mutations (wrong types, missing fields, huge and deep values, odd ids, headers and content types).
import fc from 'fast-check';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonSchema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operationId: string;
  readonly streaming: boolean;
  /** An agent-protocol operation (x-permission: agent): sent with the fuzzer's own agent token. */
  readonly agent: boolean;
  readonly parameters: readonly { name: string; in: 'path' | 'query'; required: boolean; schema: JsonSchema }[];
  readonly body?: JsonSchema;
  /** Error statuses the document answers with an HTML page (the OAuth authorization page's steps). */
  readonly pageStatuses: readonly number[];
}

export interface FuzzRequest {
  readonly operation: string;
  /** What was done to the request (the finding's name). */
  readonly mutation: string;
  readonly method: string;
  /** Path and query, as sent. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** The operation's documented HTML error statuses (Operation.pageStatuses). */
  readonly pageStatuses?: readonly number[];
}

/** The operations of an OpenAPI document. */
export const operationsOf = (document: JsonSchema): Operation[] => {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries<JsonSchema>(document['paths'] ?? {})) {
    for (const [method, op] of Object.entries<JsonSchema>(methods)) {
      const okContent = Object.keys(op['responses']?.['200']?.['content'] ?? {});
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: String(op['operationId']),
        streaming: okContent.includes('text/event-stream'),
        agent: op['x-permission'] === 'agent',
        parameters: op['parameters'] ?? [],
        pageStatuses: Object.entries<JsonSchema>(op['responses'] ?? {})
          .filter(([status, response]) => Number(status) >= 400 && response['content']?.['text/html'] !== undefined)
          .map(([status]) => Number(status)),
        ...(op['requestBody'] === undefined
          ? {}
          : { body: op['requestBody']['content']?.['application/json']?.['schema'] ?? {} }),
      });
    }
  }
  return operations;
};

/** A small seeded generator (mulberry32): the fuzzer's every choice comes from it. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** A version 4 UUID drawn from the seed. */
const uuidFrom = (rng: Rng): string => {
  const hex = Array.from({ length: 32 }, () => rng.int(0, 15).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

const matching = (pattern: string, rng: Rng): string => {
  try {
    return fc.sample(fc.stringMatching(new RegExp(pattern)), { seed: rng.int(0, 2 ** 31), numRuns: 1 })[0] ?? 'a';
  } catch {
    return 'a';
  }
};

/** A value the JSON Schema plausibly accepts (a best effort: the service's own checks decide). */
export const plausible = (schema: JsonSchema | undefined, rng: Rng, depth = 0): Json => {
  if (schema === undefined || depth > 6) return 'x';
  if (Array.isArray(schema['anyOf'])) return plausible(rng.pick(schema['anyOf'] as JsonSchema[]), rng, depth + 1);
  if (Array.isArray(schema['oneOf'])) return plausible(rng.pick(schema['oneOf'] as JsonSchema[]), rng, depth + 1);
  if (Array.isArray(schema['enum'])) return rng.pick(schema['enum'] as Json[]);
  if (schema['const'] !== undefined) return schema['const'] as Json;
  const type = Array.isArray(schema['type']) ? rng.pick(schema['type'] as string[]) : schema['type'];
  switch (type) {
    case 'string': {
      if (schema['format'] === 'uuid') return uuidFrom(rng);
      if (schema['format'] === 'email') return `fuzz${rng.int(0, 1e6)}@example.com`;
      if (schema['format'] === 'date-time') return new Date(Date.UTC(2030, 0, 1) + rng.int(0, 1e9)).toISOString();
      if (typeof schema['pattern'] === 'string') return matching(schema['pattern'], rng);
      const min = Number(schema['minLength'] ?? 1);
      const max = Math.min(Number(schema['maxLength'] ?? 16), min + 16);
      return `fz${'abcdefgh'.slice(0, rng.int(0, 8))}`.slice(0, max).padEnd(min, 'z');
    }
    case 'integer':
      return rng.int(
        Number(schema['minimum'] ?? 0),
        Math.min(Number(schema['maximum'] ?? 100), Number(schema['minimum'] ?? 0) + 100),
      );
    case 'number':
      return Number(schema['minimum'] ?? 0) + rng.next();
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'array': {
      const min = Number(schema['minItems'] ?? 0);
      return Array.from({ length: rng.int(min, min + 2) }, () => plausible(schema['items'], rng, depth + 1));
    }
    case 'object':
    default: {
      if (type === undefined && schema['properties'] === undefined) return rng.chance(0.5) ? {} : 'x';
      const out: Record<string, Json> = {};
      const required = new Set<string>(schema['required'] ?? []);
      for (const [key, sub] of Object.entries<JsonSchema>(schema['properties'] ?? {})) {
        if (required.has(key) || rng.chance(0.5)) out[key] = plausible(sub, rng, depth + 1);
      }
      return out;
    }
  }
};

const MB_STRING = 'A'.repeat(1024 * 1024);
/** One value of each JSON type, and the odd ones. */
const WRONG_VALUES: readonly Json[] = [
  'x',
  '',
  0,
  -1,
  3.5,
  true,
  false,
  null,
  [],
  [1, 'a', null],
  {},
  { a: { b: 1 } },
  1e308,
  -0,
];
const DEEP = 5000;
/** Numbers JSON can carry that a JavaScript number cannot hold (1e309 parses to Infinity). */
const NUMBER_TEXTS = [
  '1e309',
  '-1e309',
  '1e308',
  '18446744073709551616',
  '-0',
  '0.0000000000000000001',
  '123456789012345678901234567890',
];
const ODD_CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/json, text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  '*/*',
  '',
];
const ODD_IDS = [
  '00000000-0000-4000-8000-000000000000',
  'x',
  'zzzzzzzzzz',
  'a'.repeat(65),
  '%zz',
  '%00',
  '..',
  '%2e%2e%2f',
  '__proto__',
  'constructor',
  '%F0%9F%98%80',
  '-1',
  '1e309',
  '%20',
  '%C3%28',
];
const ODD_AUTHORIZATION = [
  'Bearer',
  'Bearer ',
  'Basic dXNlcjpwYXNz',
  'Bearer a.b.c',
  `Bearer ${'x'.repeat(8000)}`,
  'bearer  x',
  'Bearer \u00e9',
  'Digest username="x"',
  'Bearer null',
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
];
const JUNK_COOKIES = [
  ';;=;__proto__=x; a',
  '__proto__=x',
  'a=%zz',
  '=====',
  'refresh_token=' + 'x'.repeat(5000),
  'constructor=1; toString=2',
];
const NOT_OBJECTS = [
  '0',
  'false',
  '-0',
  '"x"',
  '[]',
  '[{}]',
  'null',
  'not json',
  '{',
  '{"a":}',
  '\u0000',
  '{"a":1}{"b":2}',
];

/**
 * Stands for the signed-in admin's access token in a planned request; the runner puts the current one in when it
 * sends (a fuzzed `POST /auth/logout` revokes the admin's tokens: the runner then signs in again).
 */
export const TOKEN = '$TOKEN';
/** Stands for the fuzzer's own agent's token on the agent-protocol operations. */
export const AGENT_TOKEN = '$AGENT_TOKEN';

/** The entities the fuzzer made for itself, by the path segment that names them (`/tenants/{id}` -> tenants). */
export type IdPool = Readonly<Record<string, readonly string[]>>;

const collectionOf = (path: string, param: string): string => {
  const parts = path.split('/');
  const at = parts.indexOf(`{${param}}`);
  return at > 0 ? parts[at - 1]! : '';
};

const fillPath = (op: Operation, ids: IdPool, rng: Rng, odd: boolean): string =>
  op.path.replace(/\{([^}]+)\}/g, (_all, name: string) => {
    if (odd) return rng.pick(ODD_IDS);
    if (name === 'version') return '1.0.0';
    if (name === 'resource_type') return rng.pick(['deployments', 'targets', 'actions']);
    const own = ids[collectionOf(op.path, name)] ?? [];
    return own.length > 0 && rng.chance(0.8) ? encodeURIComponent(rng.pick(own)) : uuidFrom(rng);
  });

const plausibleQuery = (op: Operation, rng: Rng): [string, string][] =>
  op.parameters
    .filter((p) => p.in === 'query' && (p.required || p.name === 'wait' || rng.chance(0.4)))
    .map((p) => [p.name, p.name === 'wait' ? '1' : String(plausible(p.schema, rng))]); // a long poll answers within 1 s

const queryText = (pairs: readonly (readonly [string, string])[]): string =>
  pairs.length === 0
    ? ''
    : `?${pairs.map(([k, val]) => `${encodeURIComponent(k)}=${encodeURIComponent(val)}`).join('&')}`;

const MUTATIONS = [
  'plausible',
  'wrong type',
  'missing fields',
  '1 MB string',
  'deep nesting',
  'invalid UTF-8',
  'odd content type',
  '__proto__ keys',
  'huge or non-finite number',
  'not an object',
  'foreign or odd id',
  'repeated query parameter',
  'array query parameter',
  'odd query value',
  'long header',
  'junk cookie',
  'odd authorization',
  'no authorization',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

const BODY_ONLY = new Set<Mutation>([
  'wrong type',
  'missing fields',
  '1 MB string',
  'deep nesting',
  'invalid UTF-8',
  'odd content type',
  '__proto__ keys',
  'huge or non-finite number',
  'not an object',
]);

/** One request for `op` with `mutation` (or a plausible one where the mutation does not apply). */
export const buildRequest = (op: Operation, mutation: Mutation, ids: IdPool, rng: Rng): FuzzRequest => {
  const headers: Record<string, string> = { authorization: `Bearer ${op.agent ? AGENT_TOKEN : TOKEN}` };
  let query = plausibleQuery(op, rng);
  let target = fillPath(op, ids, rng, mutation === 'foreign or odd id' && op.path.includes('{'));
  const value = op.body === undefined ? undefined : plausible(op.body, rng);
  let bodyText: string | undefined = value === undefined ? undefined : JSON.stringify(value);
  let body: Buffer | undefined;
  const object = (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<
    string,
    Json
  >;
  const fields = Object.keys(op.body?.['properties'] ?? {});
  const field = fields.length > 0 ? rng.pick(fields) : 'x';
  const withField = (text: string) => {
    const rest = JSON.stringify({ ...object, [field]: undefined });
    return rest === '{}' ? `{${JSON.stringify(field)}:${text}}` : `{${JSON.stringify(field)}:${text},${rest.slice(1)}`;
  };
  const queryNames = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  const queryName = queryNames.length > 0 ? rng.pick(queryNames) : 'page';
  switch (op.body === undefined && BODY_ONLY.has(mutation) ? 'plausible' : mutation) {
    case 'wrong type':
      bodyText = withField(JSON.stringify(rng.pick(WRONG_VALUES)));
      break;
    case 'missing fields':
      bodyText = '{}';
      break;
    case '1 MB string':
      bodyText = withField(JSON.stringify(MB_STRING));
      break;
    case 'deep nesting':
      bodyText = rng.chance(0.5)
        ? withField(`${'['.repeat(DEEP)}${']'.repeat(DEEP)}`)
        : withField(`${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`);
      break;
    case 'invalid UTF-8':
      body = Buffer.concat([
        Buffer.from(`{${JSON.stringify(field)}:"`),
        Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]),
        Buffer.from('"}'),
      ]);
      bodyText = undefined;
      break;
    case 'odd content type':
      headers['content-type'] = rng.pick(ODD_CONTENT_TYPES);
      break;
    case '__proto__ keys':
      bodyText = rng.chance(0.5)
        ? `{"__proto__":{"polluted":true,"admin":true},${(bodyText ?? '{}').slice(1)}`.replace(/,}$/, '}')
        : `{"constructor":{"prototype":{"polluted":true}},"__proto__":null,${(bodyText ?? '{}').slice(1)}`.replace(
            /,}$/,
            '}',
          );
      break;
    case 'huge or non-finite number':
      bodyText = withField(rng.pick(NUMBER_TEXTS));
      break;
    case 'not an object':
      bodyText = rng.pick(NOT_OBJECTS);
      break;
    case 'repeated query parameter':
      query = [...query.filter(([k]) => k !== queryName), [queryName, '1'], [queryName, '2']];
      break;
    case 'array query parameter':
      query = [...query.filter(([k]) => k !== queryName), [`${queryName}[]`, '1']];
      break;
    case 'odd query value':
      query = [
        ...query.filter(([k]) => k !== queryName),
        [
          queryName,
          rng.pick(['-1', '0', '1e309', 'NaN', 'x', '', '99999999999999999999', '1.5', '%zz', 'a'.repeat(2000)]),
        ],
      ];
      break;
    case 'long header':
      headers[rng.pick(['x-long', 'user-agent', 'accept'])] = 'a'.repeat(rng.pick([4_000, 17_000, 40_000]));
      break;
    case 'junk cookie':
      headers['cookie'] = rng.pick(JUNK_COOKIES);
      break;
    case 'odd authorization':
      headers['authorization'] = rng.pick(ODD_AUTHORIZATION);
      break;
    case 'no authorization':
      delete headers['authorization'];
      break;
    default:
      break;
  }
  if (mutation === 'odd query value' && query.some(([, val]) => val === '%zz')) {
    target += `?${query.map(([k, val]) => (val === '%zz' ? `${encodeURIComponent(k)}=%zz` : `${encodeURIComponent(k)}=${encodeURIComponent(val)}`)).join('&')}`;
  } else target += queryText(query);
  if (body === undefined && bodyText !== undefined) body = Buffer.from(bodyText, 'utf8');
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  if (headers['content-type'] === '') delete headers['content-type'];
  return {
    operation: `${op.method} ${op.path}`,
    ...(op.pageStatuses.length === 0 ? {} : { pageStatuses: op.pageStatuses }),
    mutation,
    method: op.method,
    target,
    headers,
    ...(body === undefined ? {} : { body }),
  };
};

/** `total` requests over every operation (round robin), each with a mutation chosen by the seed. */
export const planRequests = (
  operations: readonly Operation[],
  options: { total: number; seed: number; ids: IdPool },
): FuzzRequest[] => {
  const rng = new Rng(options.seed);
  return Array.from({ length: options.total }, (_, i) => {
    const op = operations[i % operations.length]!;
    // The first rounds give every operation each mutation once, in order; the rest are drawn.
    const round = Math.floor(i / operations.length);
    const mutation = round < MUTATIONS.length ? MUTATIONS[(round + i) % MUTATIONS.length]! : rng.pick(MUTATIONS);
    return buildRequest(op, mutation, options.ids, rng);
  });
};
