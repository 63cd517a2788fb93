// Every answer the e2e suite receives through apiClient(...).call is checked against the OpenAPI document
// (functions/shared/openapi.ts), so a test that gets an answer the document does not describe fails.
//
// The document is built in process from the same route tables the stack serves (buildOpenApi(documentedRoutes())):
// fetching /api/v1/openapi.json from the stack would be one more request per stack, counted by the general rate
// limit that some tests measure. tests/e2e/stack.test.ts checks the served document is this one.
//
// The check:
// - the operation is found by method and path template (literal segments win over `{param}` ones, as the router
//   does); the response by status, else `default`;
// - a JSON answer (application/json) is validated against the response's schema with a JSON Schema 2020-12
//   validator (Ajv), `$ref`s resolved against the document's components;
// - any other answer: its media type must be one the response lists; an empty body must be a response without
//   content (or a 204);
// - a request outside the document (an unknown path or a method a path does not serve, sent on purpose) is still
//   ours: its answer must be the error envelope (or the general limiter's plain-text 429).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { documentedRoutes } from '../../functions/http/routes.js';
import { buildOpenApi } from '../../functions/shared/openapi.js';

type JsonObject = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Answer {
  readonly method: string;
  /** The request path, query string included or not. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

let built:
  { doc: JsonObject; ajv: Ajv2020; templates: { path: string; pattern: RegExp; literal: number }[] } | undefined;

const DOC_ID = 'https://deployer.invalid/openapi';

/** The document and a validator that knows it (its components resolve from any schema inside it). */
export const openApiDocument = () => {
  if (built !== undefined) return built;
  const doc = buildOpenApi(documentedRoutes(), { version: 'test' }) as JsonObject;
  // strict: false, because the document's schemas carry OpenAPI's own annotations alongside JSON Schema's.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const templates = Object.keys(doc['paths'] as JsonObject).map((path) => ({
    path,
    pattern: new RegExp(
      `^${path
        .split('/')
        .map((part) => (/^\{.+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
        .join('/')}$`,
    ),
    literal: path.split('/').filter((part) => !/^\{.+\}$/.test(part)).length,
  }));
  built = { doc, ajv, templates };
  return built;
};

const validators = new Map<string, ValidateFunction>();

/** The schema wrapped in a root that carries the document's components, so `#/components/...` resolves there. */
const validatorFor = (key: string, schema: JsonObject): ValidateFunction => {
  let validate = validators.get(key);
  if (validate === undefined) {
    const { ajv, doc } = openApiDocument();
    validate = ajv.compile({ $id: `${DOC_ID}/${validators.size}`, allOf: [schema], components: doc['components'] });
    validators.set(key, validate);
  }
  return validate;
};

const mediaType = (contentType: string | null): string | undefined =>
  contentType?.split(';')[0]?.trim().toLowerCase() || undefined;

/** The template of the document that `path` (no query string) matches, the most literal first. */
export const templateOf = (path: string): string | undefined => {
  const bare = path.split('?')[0] ?? path;
  const matches = openApiDocument().templates.filter((t) => t.pattern.test(bare));
  matches.sort((a, b) => b.literal - a.literal);
  return matches[0]?.path;
};

const describe = (answer: Answer, template: string | undefined): string =>
  `${answer.method} ${template ?? answer.path} answered ${answer.status}`;

/** The web console's static files (local/console-assets.ts): pages of the origin, not operations of the API. */
const isConsoleFile = (answer: Answer): boolean => {
  const bare = answer.path.split('?')[0] ?? answer.path;
  return (
    (answer.method === 'GET' || answer.method === 'HEAD') &&
    answer.status === 200 &&
    (bare === '/' || bare === '/index.html' || bare.startsWith('/assets/'))
  );
};

/** The problems of an answer, empty when the document describes it. */
export const conformanceProblems = (answer: Answer): string[] => {
  if (isConsoleFile(answer)) return [];
  const { doc } = openApiDocument();
  const template = templateOf(answer.path);
  const operation =
    template === undefined ? undefined : (doc['paths'][template] as JsonObject)[answer.method.toLowerCase()];
  const type = mediaType(answer.contentType);
  if (operation === undefined) {
    // Outside the document: still ours, so the envelope (or the general limiter's plain text).
    if (answer.status === 429 && type === 'text/plain') return [];
    if (answer.status < 400)
      return [`${describe(answer, template)}: a success for a request the document does not list`];
    return checkJson(answer, 'outside', { $ref: '#/components/schemas/ErrorEnvelope' }, type);
  }
  const responses = operation['responses'] as JsonObject;
  const response = (responses[String(answer.status)] ?? responses['default']) as JsonObject | undefined;
  if (response === undefined)
    return [`${describe(answer, template)}: the operation does not list this status (and has no default)`];
  const content = response['content'] as JsonObject | undefined;
  if (answer.text === '') {
    if (content === undefined || answer.status === 204) return [];
    return [`${describe(answer, template)}: an empty body, but the document lists ${Object.keys(content).join(', ')}`];
  }
  if (content === undefined)
    return [`${describe(answer, template)}: a body (${type}), but the document lists no content`];
  if (type === undefined || content[type] === undefined) {
    return [
      `${describe(answer, template)}: content type ${type ?? '(none)'} is not one the document lists (${Object.keys(content).join(', ')})`,
    ];
  }
  if (type !== 'application/json') return [];
  const schema = (content[type] as JsonObject)['schema'] as JsonObject | undefined;
  if (schema === undefined) return [];
  return checkJson(answer, `${answer.method} ${template} ${answer.status}`, schema, type, template);
};

const checkJson = (
  answer: Answer,
  key: string,
  schema: JsonObject,
  type: string | undefined,
  template?: string,
): string[] => {
  if (type !== 'application/json')
    return [`${describe(answer, template)}: content type ${type ?? '(none)'}, the document lists application/json`];
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return [`${describe(answer, template)}: the body is not JSON: ${answer.text.slice(0, 200)}`];
  }
  const validate = validatorFor(key, schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).map(
    (e) =>
      `${describe(answer, template)}: ${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
  );
};

/** Throws an Error naming method, path, status and the problems when the document does not describe the answer. */
export const assertConforms = (answer: Answer): void => {
  const problems = conformanceProblems(answer);
  if (problems.length === 0) return;
  throw new Error(
    `The answer does not match the OpenAPI document:\n  ${problems.slice(0, 20).join('\n  ')}\n  body: ${answer.text.slice(0, 500)}`,
  );
};
