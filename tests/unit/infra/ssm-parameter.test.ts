// GetParameter without the SSM client: the request a real socket carries (target, body, Signature V4 over exactly
// what was sent), the value, a missing parameter, retries of throttling, 5xx and network errors only, and errors
// that name the parameter but never carry a value.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSecureParameter, NodeSha256, type SsmTransport } from '../../../infra/ssm-parameter.js';

const ENV = {
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  AWS_SESSION_TOKEN: 'session-token',
};

/** The Authorization header a correct signer computes for what the server received, at the request's own date. */
const expectedAuthorization = async (headers: IncomingHttpHeaders, path: string, body: string) => {
  const signer = new SignatureV4({
    service: 'ssm',
    region: ENV.AWS_REGION,
    sha256: NodeSha256,
    credentials: {
      accessKeyId: ENV.AWS_ACCESS_KEY_ID,
      secretAccessKey: ENV.AWS_SECRET_ACCESS_KEY,
      sessionToken: ENV.AWS_SESSION_TOKEN,
    },
  });
  const amzDate = String(headers['x-amz-date']);
  const date = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const signedNames = /SignedHeaders=([^,]+)/.exec(String(headers.authorization))![1]!.split(';');
  const signedHeaders = Object.fromEntries(
    signedNames
      .filter((n) => !['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'].includes(n))
      .map((n) => [n, String(headers[n])]),
  );
  const signed = await signer.sign(
    { method: 'POST', protocol: 'http:', hostname: '127.0.0.1', path, query: {}, headers: signedHeaders, body },
    { signingDate: date },
  );
  return signed.headers['authorization'];
};

describe('getSecureParameter over a real socket', () => {
  const received: { headers: IncomingHttpHeaders; body: string; url: string }[] = [];
  let answers: { status: number; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body, url: req.url ?? '' });
      const answer = answers.shift() ?? { status: 500, body: '{}' };
      res.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.1' }).end(answer.body);
    });
  });
  let endpoint = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends a signed GetParameter with decryption and answers the value', async () => {
    // Prepare
    received.length = 0;
    answers = [
      { status: 200, body: JSON.stringify({ Parameter: { Name: '/p/keys', Value: 'k1:abc', Type: 'SecureString' } }) },
    ];

    // Act
    const value = await getSecureParameter('/p/keys', { env: { ...ENV, AWS_ENDPOINT_URL_SSM: endpoint } });

    // Assess
    expect(value).toBe('k1:abc');
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request!.headers['x-amz-target']).toBe('AmazonSSM.GetParameter');
    expect(request!.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(JSON.parse(request!.body)).toEqual({ Name: '/p/keys', WithDecryption: true });
    expect(request!.headers['x-amz-security-token']).toBe('session-token');
    expect(String(request!.headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ssm\/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-target[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(request!.headers.authorization).toBe(
      await expectedAuthorization(request!.headers, request!.url, request!.body),
    );
  });

  it('answers undefined for a parameter that does not exist, without retrying', async () => {
    // Prepare
    received.length = 0;
    answers = [{ status: 400, body: JSON.stringify({ __type: 'com.amazonaws.ssm#ParameterNotFound', message: 'x' }) }];

    // Act
    const value = await getSecureParameter('/p/none', { env: { ...ENV, AWS_ENDPOINT_URL_SSM: endpoint } });

    // Assess
    expect(value).toBeUndefined();
    expect(received).toHaveLength(1);
  });

  it('retries throttling and 5xx answers, then answers the value', async () => {
    // Prepare
    received.length = 0;
    answers = [
      { status: 400, body: JSON.stringify({ __type: 'ThrottlingException' }) },
      { status: 503, body: '{}' },
      { status: 200, body: JSON.stringify({ Parameter: { Value: 'v' } }) },
    ];

    // Act
    const value = await getSecureParameter('/p/x', {
      env: { ...ENV, AWS_ENDPOINT_URL_SSM: endpoint },
      sleep: async () => undefined,
    });

    // Assess
    expect(value).toBe('v');
    expect(received).toHaveLength(3);
  });

  it('fails at once on a refusal, naming the parameter and the error type only', async () => {
    // Prepare
    received.length = 0;
    answers = [
      { status: 400, body: JSON.stringify({ __type: 'AccessDeniedException', message: 'secret-ish detail' }) },
    ];

    // Act
    const failed = getSecureParameter('/p/denied', { env: { ...ENV, AWS_ENDPOINT_URL_SSM: endpoint } });

    // Assess
    await expect(failed).rejects.toThrow('Reading parameter /p/denied failed: 400 AccessDeniedException');
    await failed.catch((error: Error) => expect(error.message).not.toContain('secret-ish'));
    expect(received).toHaveLength(1);
  });
});

describe('NodeSha256', () => {
  it('computes HMAC-SHA-256 as RFC 4231 test case 2 says, from a string or bytes', async () => {
    const fromString = new NodeSha256('Jefe');
    fromString.update('what do ya want ');
    fromString.update(new TextEncoder().encode('for nothing?'));
    const fromBytes = new NodeSha256(new TextEncoder().encode('Jefe').buffer);
    fromBytes.update('what do ya want for nothing?');
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    expect(Buffer.from(await fromString.digest()).toString('hex')).toBe(expected);
    expect(Buffer.from(await fromBytes.digest()).toString('hex')).toBe(expected);
  });
});

describe('getSecureParameter, transport failures', () => {
  it('retries network errors up to the attempts, then fails', async () => {
    // Prepare
    let calls = 0;
    const transport: SsmTransport = async () => {
      calls += 1;
      throw new Error('connect ECONNREFUSED');
    };

    // Act
    const failed = getSecureParameter('/p/x', { env: ENV, transport, attempts: 3, sleep: async () => undefined });

    // Assess
    await expect(failed).rejects.toThrow('Reading parameter /p/x failed: connect ECONNREFUSED');
    expect(calls).toBe(3);
  });

  it('refuses to run without the role credentials in the environment', async () => {
    await expect(getSecureParameter('/p/x', { env: { AWS_REGION: 'us-east-1' } })).rejects.toThrow(/credentials/);
  });
});
