// The project's own HTTP fuzzer, driven by the served `/api/v1/openapi.json` (a new route is fuzzed without anyone
// remembering to). Seeded: the same seed and total give the same requests. Used by tests/e2e/fuzz.test.ts (a few
// hundred requests) and `npm run bench:fuzz -- --total 10000 [--seed N]` (tests/bench/fuzz.ts).
//
// Per operation it sends: a plausible request built from the operation's schemas, each body field with a wrong
// JSON type, missing fields, 1 MB strings, deep nesting, invalid UTF-8, odd content types, `__proto__` keys, huge and
// non-finite numbers, bodies that are not JSON or not objects, foreign and odd ids in the path, repeated and array
// query parameters, and header oddities (long headers, junk cookies, odd authorization). Each answer is classified:
// 2xx, 3xx, 4xx with the service's envelope, 5xx, timeout, or not the envelope; the last is allowed only when it is
// one of PLATFORM_ANSWERS (the list docs/errors.md gives a client author).
import { request } from 'node:http';
import { AGENT_TOKEN, TOKEN, type FuzzRequest, type IdPool } from './fuzz-requests.js';

export * from './fuzz-requests.js';

// ---- what docs/errors.md lists as answers that are not the envelope (keep the two in step) ------------------

export interface PlatformAnswer {
  readonly status: number;
  readonly contentType: RegExp;
  readonly body: RegExp;
  /** docs/errors.md's words for it. */
  readonly when: string;
}

/** Locally (npm start, the e2e stack): the answers that are not the service's JSON envelope. */
export const PLATFORM_ANSWERS: readonly PlatformAnswer[] = [
  {
    status: 429,
    contentType: /^text\/plain/,
    body: /^Too Many Requests/,
    when: 'the general rate limit (docs/errors.md section 2): plain text, Retry-After',
  },
];

/**
 * The fuzz stack's limits: every request comes from one address, so the general rate limit and the failed-login
 * lockout (the fuzzed `POST /auth/login` fails on purpose) are raised; the fuzz measures the answers, not the limiters.
 */
export const FUZZ_STACK_ENV: Readonly<Record<string, string>> = {
  RATE_LIMIT_PER_SECOND: '100000',
  RATE_LIMIT_BURST: '100000',
  LOGIN_MAX_FAILURES: '1000',
  LOGIN_WINDOW_SECONDS: '1',
};

// ---- sending and classifying -------------------------------------------------------------------------------

export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly timedOut: boolean;
  /** The connection failed (reset, refused) before an answer. */
  readonly error?: string;
}

/** Sends the request as given (node:http: no header or path is rewritten); an event stream is closed after its head. */
export const send = (baseUrl: string, req: FuzzRequest, timeoutMs: number): Promise<Answer> =>
  new Promise((resolve) => {
    const url = new URL(baseUrl);
    let settled = false;
    const done = (answer: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const headers: Record<string, string> = {
      ...req.headers,
      ...(req.body === undefined ? {} : { 'content-length': String(req.body.length) }),
    };
    let outgoing: ReturnType<typeof request>;
    try {
      outgoing = request(
        { host: url.hostname, port: url.port, method: req.method, path: req.target, headers },
        (res) => {
          const contentType = String(res.headers['content-type'] ?? '');
          if (contentType.startsWith('text/event-stream')) {
            res.destroy();
            done({ status: res.statusCode ?? 0, contentType, body: '', timedOut: false });
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            done({
              status: res.statusCode ?? 0,
              contentType,
              body: Buffer.concat(chunks).toString('utf8'),
              timedOut: false,
            }),
          );
          res.on('error', (e) =>
            done({
              status: res.statusCode ?? 0,
              contentType,
              body: Buffer.concat(chunks).toString('utf8'),
              timedOut: false,
              error: e.message,
            }),
          );
        },
      );
    } catch (error) {
      // node:http itself refuses to send it (a character a path or header cannot carry): a bug of the plan, not of the service
      resolve({
        status: -1,
        contentType: '',
        body: '',
        timedOut: false,
        error: `not sent: ${(error as Error).message}`,
      });
      return;
    }
    const timer = setTimeout(() => {
      outgoing.destroy();
      done({ status: 0, contentType: '', body: '', timedOut: true });
    }, timeoutMs);
    outgoing.on('error', (e) => done({ status: 0, contentType: '', body: '', timedOut: false, error: e.message }));
    outgoing.end(req.body);
  });

export type Outcome =
  | '2xx'
  | '3xx'
  | '4xx envelope'
  | '5xx'
  | 'timeout'
  | 'platform answer'
  | 'non-envelope'
  | 'connection error'
  | 'not sent';

const isEnvelope = (answer: Answer): boolean => {
  if (!answer.contentType.startsWith('application/json')) return false;
  try {
    const json = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown } };
    return typeof json.error?.code === 'string' && typeof json.error.message === 'string';
  } catch {
    return false;
  }
};

/**
 * An RFC 6749 section 5.2 error (`{error, error_description?}`, JSON): what the OAuth endpoints answer instead of the
 * envelope, since OAuth clients parse those. Accepted only from /oauth/* paths.
 */
const isOAuthError = (answer: Answer): boolean => {
  if (!answer.contentType.startsWith('application/json') || ![400, 401, 429].includes(answer.status)) return false;
  try {
    const json = JSON.parse(answer.body) as { error?: unknown; error_description?: unknown };
    return (
      typeof json.error === 'string' &&
      /^[a-z_]+$/.test(json.error) &&
      (json.error_description === undefined || typeof json.error_description === 'string')
    );
  } catch {
    return false;
  }
};

/** An HTML page answered with a status the operation documents as a page (the OAuth authorization page). */
const isDocumentedPage = (answer: Answer, pageStatuses: readonly number[]): boolean =>
  pageStatuses.includes(answer.status) &&
  answer.contentType.startsWith('text/html') &&
  answer.body.startsWith('<!doctype html>');

export const classify = (answer: Answer, target = '', pageStatuses: readonly number[] = []): Outcome => {
  if (answer.timedOut) return 'timeout';
  if (answer.status === -1) return 'not sent';
  if (answer.status === 0) return 'connection error';
  if (answer.status >= 500) return '5xx';
  if (answer.status >= 200 && answer.status < 300) return '2xx';
  if (answer.status >= 300 && answer.status < 400) return '3xx';
  if (isEnvelope(answer)) return '4xx envelope';
  if (/^\/oauth\//.test(target) && isOAuthError(answer)) return '4xx envelope';
  if (isDocumentedPage(answer, pageStatuses)) return '4xx envelope';
  if (
    PLATFORM_ANSWERS.some(
      (p) => p.status === answer.status && p.contentType.test(answer.contentType) && p.body.test(answer.body),
    )
  )
    return 'platform answer';
  return 'non-envelope';
};

/** Outcomes that are findings: each must be 0. */
export const BAD_OUTCOMES: readonly Outcome[] = ['5xx', 'timeout', 'non-envelope', 'connection error', 'not sent'];

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** A curl line that sends the same request (long runs written as $(head -c N /dev/zero | tr ...); $TOKEN: an admin's access token). */
export const curlOf = (baseUrl: string, req: FuzzRequest): string => {
  const short = (text: string): string => {
    const run = /(.)\1{199,}/su.exec(text);
    if (run === null) return shellQuote(text);
    const [all, ch] = run;
    return `${shellQuote(text.slice(0, run.index))}"$(head -c ${all.length} /dev/zero | tr '\\0' ${shellQuote(ch!)})"${short(text.slice(run.index + all.length))}`;
  };
  const parts = ['curl -sS -i', '-X', req.method];
  for (const [name, value] of Object.entries(req.headers))
    parts.push(
      '-H',
      value === `Bearer ${TOKEN}` || value === `Bearer ${AGENT_TOKEN}`
        ? `"${name}: ${value}"`
        : short(`${name}: ${value}`),
    );
  if (req.body !== undefined && req.headers['content-type'] === undefined) parts.push('-H', `'content-type:'`); // curl would add its own
  if (req.body !== undefined) {
    const text = req.body.toString('utf8');
    if (Buffer.from(text, 'utf8').equals(req.body)) parts.push('--data-binary', short(text));
    else
      parts.push(
        '--data-binary',
        `"$(printf '${[...req.body].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('')}')"`,
      );
  }
  parts.push('--path-as-is', shellQuote(`${baseUrl}${req.target}`));
  return parts.join(' ');
};

export interface Finding {
  readonly outcome: Outcome;
  readonly status: number;
  readonly operation: string;
  readonly mutation: string;
  readonly answer: string;
  readonly curl: string;
  count: number;
}

export interface FuzzReport {
  readonly total: number;
  readonly counts: Record<Outcome, number>;
  readonly byStatus: Record<string, number>;
  /** Distinct (outcome, status, operation, mutation) of the bad outcomes, with one reproduction each. */
  readonly findings: Finding[];
  readonly millis: number;
  /** Times the admin signed in again after its tokens were revoked (a fuzzed logout). */
  readonly relogins: number;
}

export interface FuzzRun {
  readonly baseUrl: string;
  /** Signs the admin in (again): the access token. */
  readonly login: () => Promise<string>;
  /** The fuzzer's own agent's token (ownEntities). */
  readonly agentToken?: string;
  readonly requests: readonly FuzzRequest[];
  readonly timeoutMs?: number;
  readonly concurrency?: number;
  readonly onProgress?: (done: number, counts: Readonly<Record<Outcome, number>>) => void;
}

export const runFuzz = async (run: FuzzRun): Promise<FuzzReport> => {
  const started = Date.now();
  const counts: Record<Outcome, number> = {
    '2xx': 0,
    '3xx': 0,
    '4xx envelope': 0,
    '5xx': 0,
    timeout: 0,
    'platform answer': 0,
    'non-envelope': 0,
    'connection error': 0,
    'not sent': 0,
  };
  const byStatus: Record<string, number> = {};
  const findings = new Map<string, Finding>();
  let next = 0;
  let done = 0;
  let token = await run.login();
  let relogins = 0;
  let signingIn: Promise<void> | undefined;
  const withToken = (req: FuzzRequest): FuzzRequest => {
    if (req.headers['authorization'] === `Bearer ${TOKEN}`)
      return { ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } };
    if (req.headers['authorization'] === `Bearer ${AGENT_TOKEN}`)
      return { ...req, headers: { ...req.headers, authorization: `Bearer ${run.agentToken ?? 'none'}` } };
    return req;
  };
  const worker = async () => {
    while (next < run.requests.length) {
      const req = run.requests[next++]!;
      const sentWith = token;
      const answer = await send(run.baseUrl, withToken(req), run.timeoutMs ?? 15_000);
      if (
        answer.status === 401 &&
        req.headers['authorization'] === `Bearer ${TOKEN}` &&
        sentWith === token &&
        /revoked/.test(answer.body)
      ) {
        signingIn ??= run.login().then((fresh) => {
          token = fresh;
          relogins += 1;
          signingIn = undefined;
        });
        await signingIn;
      }
      const outcome = classify(answer, req.target, req.pageStatuses);
      counts[outcome] += 1;
      byStatus[String(answer.status)] = (byStatus[String(answer.status)] ?? 0) + 1;
      if (BAD_OUTCOMES.includes(outcome)) {
        const key = `${outcome}|${answer.status}|${req.operation}|${req.mutation}`;
        const known = findings.get(key);
        if (known !== undefined) known.count += 1;
        else
          findings.set(key, {
            outcome,
            status: answer.status,
            operation: req.operation,
            mutation: req.mutation,
            answer: (answer.error ?? `${answer.contentType} ${answer.body}`).slice(0, 300),
            curl: curlOf(run.baseUrl, req),
            count: 1,
          });
      }
      done += 1;
      run.onProgress?.(done, counts);
    }
  };
  await Promise.all(Array.from({ length: run.concurrency ?? 4 }, worker));
  return {
    total: run.requests.length,
    counts,
    byStatus,
    findings: [...findings.values()],
    millis: Date.now() - started,
    relogins,
  };
};

// ---- the fuzzer's own entities ---------------------------------------------------------------------------------

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Creates a tenant, an environment, an action (with version 1.0.0) and a registered agent (tag fuzz=<tag>: no
 * deployment ever selects it) of the fuzzer's own; `cleanup` deletes them.
 */
export const ownEntities = async (
  call: Call,
  tag: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  register: (body: unknown) => Promise<{ status: number; json: any }>,
): Promise<{ ids: IdPool; agentToken: string; cleanup: () => Promise<void> }> => {
  const must = async (method: string, path: string, body: unknown) => {
    const reply = await call(method, path, body);
    if (reply.status >= 300)
      throw new Error(`${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.json)}`);
    return reply.json as { id: string; short_id?: string };
  };
  const slug = `fuzz-${tag}`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 60);
  const tenant = await must('POST', '/tenants', { name: `Fuzz ${tag}`, slug });
  const environment = await must('POST', '/environments', { name: `fuzz-${tag}`, tenant_id: tenant.id });
  const action = await must('POST', '/actions', {
    slug,
    name: `Fuzz ${tag}`,
    version: { version: '1.0.0', script: 'echo fuzz' },
  });
  const both = (e: { id: string; short_id?: string }) => (e.short_id === undefined ? [e.id] : [e.id, e.short_id]);
  const enrollment = await must('POST', '/targets/enrollment-tokens', {});
  const agent = await register({
    enrollment_token: (enrollment as unknown as { token: string }).token,
    name: slug,
    hostname: slug,
    os: 'linux',
    arch: 'x64',
    agent_version: '1.0.0',
    tags: [{ key: 'fuzz', value: slug }],
  });
  if (agent.status !== 201)
    throw new Error(`agent registration answered ${agent.status}: ${JSON.stringify(agent.json)}`);
  const targetId = agent.json.target_id as string;
  return {
    ids: { tenants: both(tenant), environments: both(environment), actions: both(action) },
    agentToken: agent.json.agent_token as string,
    cleanup: async () => {
      await call('DELETE', `/targets/${targetId}`);
      await call('DELETE', `/actions/${action.id}`);
      await call('DELETE', `/environments/${environment.id}`);
      await call('DELETE', `/tenants/${tenant.id}`);
    },
  };
};

/** Prints a report: counts, statuses, and every distinct finding with its reproduction. */
export const formatReport = (report: FuzzReport, seed: number): string => {
  const lines = [
    `fuzz: ${report.total} requests, seed ${seed}, ${(report.millis / 1000).toFixed(1)} s`,
    ...Object.entries(report.counts).map(([outcome, count]) => `  ${outcome.padEnd(18)} ${String(count).padStart(6)}`),
    `  signed in again after a fuzzed logout: ${report.relogins} times`,
    `  statuses: ${Object.entries(report.byStatus)
      .sort()
      .map(([s, n]) => `${s}=${n}`)
      .join(' ')}`,
    `findings: ${report.findings.length}`,
  ];
  for (const f of report.findings)
    lines.push(
      `- ${f.outcome} ${f.status} x${f.count}: ${f.operation} (${f.mutation})`,
      `    answer: ${f.answer.replace(/\s+/g, ' ')}`,
      `    repro:  ${f.curl}`,
    );
  return lines.join('\n');
};
