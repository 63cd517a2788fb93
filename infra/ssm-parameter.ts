// One call of AWS Systems Manager: GetParameter with decryption, for the secrets read at cold start
// (infra/secrets.ts). It is a signed JSON POST (the SSM API's `AmazonSSM.GetParameter` target), signed by the SDK's
// own Signature V4 signer with the function's role credentials from the environment, where Lambda puts them.
// Why not `@aws-sdk/client-ssm` (through Powertools' parameters utility, as before): the client registers every
// SSM error and shape at import, about 100 KiB that every function's cold start compiled for one call of one
// operation; measured in docs/decisions.md ("Bundles that start fast"). The Lambda extension for parameters
// cannot be called during a function's initialisation, when these are read.
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { SignatureV4 } from '@smithy/signature-v4';

type SourceData = string | ArrayBuffer | ArrayBufferView;

const bytes = (data: SourceData): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

/** SHA-256 (or its HMAC when given a key) in the shape the signer takes. */
export class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

export interface SsmResponse {
  readonly status: number;
  readonly body: string;
}

/** Sends one HTTPS request and answers its status and body; the transport the tests replace. */
export type SsmTransport = (
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
) => Promise<SsmResponse>;

const MAX_RESPONSE_BYTES = 256 * 1024;

const httpsTransport: SsmTransport = (url, headers, body, timeoutMs) =>
  new Promise((resolve, reject) => {
    // http only for an endpoint override that says so (a local stand-in); AWS's endpoints are https.
    const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const req = request(url, { method: 'POST', headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) req.destroy(new Error('SSM answered more than expected'));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`SSM did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });

export interface GetParameterOptions {
  readonly env?: Record<string, string | undefined>;
  readonly transport?: SsmTransport;
  /** Attempts for throttling, 5xx answers and network errors (the SDK's standard mode makes 3). */
  readonly attempts?: number;
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const RETRYABLE_TYPES = /Throttling|ThrottledException|TooManyUpdates|InternalServerError|ServiceUnavailable/;

const errorType = (body: string): string => {
  try {
    const parsed = JSON.parse(body) as { __type?: unknown };
    // `__type` is the error's shape name, sometimes with its namespace (`com.amazonaws.ssm#ParameterNotFound`).
    return typeof parsed.__type === 'string' ? (parsed.__type.split('#').at(-1) ?? '') : '';
  } catch {
    return '';
  }
};

/**
 * The decrypted value of one parameter, or `undefined` when it does not exist. Other failures throw an error that
 * names the parameter and the error type, never a value. The endpoint is `ssm.<region>.amazonaws.com`, or
 * AWS_ENDPOINT_URL_SSM / AWS_ENDPOINT_URL when set, as the SDK reads them.
 */
export const getSecureParameter = async (
  name: string,
  options: GetParameterOptions = {},
): Promise<string | undefined> => {
  const env = options.env ?? process.env;
  const region = env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (region === undefined || accessKeyId === undefined || secretAccessKey === undefined)
    throw new Error('Reading a parameter needs AWS_REGION and the role credentials in the environment');
  const url = new URL(env['AWS_ENDPOINT_URL_SSM'] ?? env['AWS_ENDPOINT_URL'] ?? `https://ssm.${region}.amazonaws.com`);
  const body = JSON.stringify({ Name: name, WithDecryption: true });
  const signer = new SignatureV4({
    service: 'ssm',
    region,
    sha256: NodeSha256,
    credentials: { accessKeyId, secretAccessKey, sessionToken: env['AWS_SESSION_TOKEN'] },
  });
  const transport = options.transport ?? httpsTransport;
  const attempts = options.attempts ?? 3;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let failure = '';
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: url.pathname,
      query: {},
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': 'AmazonSSM.GetParameter',
      },
      body,
    });
    let response: SsmResponse | undefined;
    try {
      response = await transport(url, signed.headers, body, options.timeoutMs ?? 5_000);
    } catch (error) {
      failure = error instanceof Error ? error.message : 'network error';
    }
    if (response !== undefined) {
      if (response.status === 200) {
        const value = (JSON.parse(response.body) as { Parameter?: { Value?: unknown } }).Parameter?.Value;
        if (typeof value !== 'string') throw new Error(`SSM answered no value for parameter ${name}`);
        return value;
      }
      const type = errorType(response.body);
      if (type === 'ParameterNotFound') return undefined;
      failure = `${response.status} ${type || 'error'}`;
      if (response.status < 500 && !RETRYABLE_TYPES.test(type)) break;
    }
    if (attempt < attempts) await sleep(100 * 2 ** attempt * (0.5 + Math.random() / 2));
  }
  throw new Error(`Reading parameter ${name} failed: ${failure}`);
};
