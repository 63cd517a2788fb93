// Attacks on what a deployment runs (issue 10, "Execution and secrets", rules 1-3), over HTTP against the local
// stack with the real local agents. The attacker holds one write permission, deployments:create (plus reads): it
// tries to make the target run its own code through loader, shell and interpreter variables, or to smuggle in a
// variable no action declares. Each attempt is a 400 naming the variable, and nothing runs.
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandIdOf } from '../../../domain/deployments/engine.js';
import { LOCAL_CREDENTIALS } from '../../../local/emulators.js';
import { startLocalAgents, type LocalAgent } from '../../../local/agents.js';
import { apiClient } from '../../support/http.js';
import { createUser } from '../../support/users.js';
import { useStack } from '../../support/stack-fixture.js';

const DEPLOYER = { email: 'mallory@example.com', password: 'mallory-password' };
const e2e = useStack('sec-exec');
let deployer: string;
let dir: string;
let agents: readonly LocalAgent[] = [];

const api = apiClient(() => e2e.stack.baseUrl);
const call = (token: string, method: string, path: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });
const web = { target_tags: [{ key: 'role', value: 'web' }] };
const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

let n = 0;
/** An action (by the admin, an action author) with one version; its id. */
const action = async (version: Record<string, unknown>): Promise<string> => {
  n += 1;
  const created = await call(e2e.admin, 'POST', '/actions', {
    slug: `sec-exec-${n}`,
    name: `Sec exec ${n}`,
    version: { version: '1.0.0', ...version },
  });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json.id;
};

const finished = async (id: string, withinMs = 40_000) => {
  const until = Date.now() + withinMs;
  for (;;) {
    const d = (await call(e2e.admin, 'GET', `/deployments/${id}`)).json;
    if (['success', 'failed', 'cancelled', 'rolled_back'].includes(d.state)) return d;
    if (Date.now() > until) throw new Error(`deployment still ${d.state}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};
const stdout = async (id: string): Promise<string> =>
  ((await call(e2e.admin, 'GET', `/deployments/${id}/logs/history`)).json as { stdout: string | null }[])
    .map((e) => e.stdout)
    .filter((s) => s !== null)
    .join('\n');
const deploymentCount = async (): Promise<number> =>
  (await call(e2e.admin, 'GET', '/deployments?limit=1')).json.meta.total;
const fieldsOf = (json: { error?: { details?: { fields?: { field: string }[] } } }) =>
  (json.error?.details?.fields ?? []).map((f) => f.field).sort();

beforeAll(async () => {
  const role = await call(e2e.admin, 'POST', '/admin/roles', {
    name: 'deploy-only',
    description: 'creates deployments, reads the rest',
  });
  expect(role.status).toBe(201);
  const granted = await call(e2e.admin, 'POST', `/admin/roles/${role.json.id}/permissions`, {
    permissions: ['deployments:create', 'deployments:read', 'actions:read', 'targets:read'],
  });
  expect(granted.status).toBe(204);
  await createUser(DEPLOYER.email, DEPLOYER.password, ['deploy-only']);
  deployer = (await api.login(DEPLOYER)).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-sec-exec-'));
  agents = await startLocalAgents(e2e.stack, dir, () => undefined);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await rm(dir, { recursive: true, force: true });
});

describe('a deployer cannot change how the action starts', () => {
  it('holds only deployments:create to write, and may deploy a declared variable, which reaches the script', async () => {
    // Prepare
    const id = await action({ script: 'echo "greeting=$GREETING"', variables: [{ name: 'GREETING' }] });
    // Act
    const denied = await call(deployer, 'POST', '/actions', {
      slug: 'mine',
      name: 'Mine',
      version: { version: '1.0.0', script: 'id' },
    });
    const created = await call(deployer, 'POST', '/deployments', {
      action_id: id,
      ...web,
      variables: { GREETING: 'hello' },
    });
    // Assess
    expect(denied.status).toBe(403);
    expect([created.status, created.json.error]).toEqual([201, undefined]);
    expect((await finished(created.json.deployment_id)).state).toBe('success');
    expect(await stdout(created.json.deployment_id)).toContain('greeting=hello');
  });

  it('a value that starts with enc: is an ordinary value: it reaches the script and the detail exactly as given', async () => {
    // Prepare
    const id = await action({ script: 'echo "note=$NOTE"', variables: [{ name: 'NOTE' }] });
    // Act
    const created = await call(deployer, 'POST', '/deployments', {
      action_id: id,
      ...web,
      variables: { NOTE: 'enc:x' },
    });
    // Assess
    expect([created.status, created.json.error]).toEqual([201, undefined]);
    const done = await finished(created.json.deployment_id);
    expect([done.state, done.config.variables, done.plan.resolved_variables]).toEqual([
      'success',
      { NOTE: 'enc:x' },
      { NOTE: 'enc:x' },
    ]);
    expect(await stdout(created.json.deployment_id)).toContain('note=enc:x');
  });

  // Each attack, if it got through, would make the target's interpreter write `marker` before the script runs.
  const attacks = (marker: string): [string, string, string, Record<string, unknown>, string[]][] => [
    [
      'NODE_OPTIONS --import',
      'node',
      'console.log(1)',
      {
        variables: {
          NODE_OPTIONS: `--import=data:text/javascript,import('node:fs').then(f=>f.writeFileSync('${marker}','x'))`,
        },
      },
      ['variables.NODE_OPTIONS'],
    ],
    ['LD_PRELOAD', 'sh', 'echo 1', { variables: { LD_PRELOAD: `${marker}.so` } }, ['variables.LD_PRELOAD']],
    [
      'lower-case ld_preload',
      'sh',
      'echo 1',
      { prompted_values: { ld_preload: `${marker}.so` } },
      ['prompted_values.ld_preload'],
    ],
    [
      'SHELLOPTS=xtrace + PS4',
      'bash',
      'echo 1',
      { variables: { SHELLOPTS: 'xtrace', PS4: `$(touch ${marker})` } },
      ['variables.PS4', 'variables.SHELLOPTS'],
    ],
    [
      'PYTHONWARNINGS + BROWSER',
      'python3',
      'print(1)',
      { variables: { PYTHONWARNINGS: 'all:0:antigravity.x:0:0', BROWSER: `touch ${marker}` } },
      ['variables.BROWSER', 'variables.PYTHONWARNINGS'],
    ],
    ['BASH_ENV', 'bash', 'echo 1', { variables: { BASH_ENV: `${marker}.sh` } }, ['variables.BASH_ENV']],
    ['__proto__', 'sh', 'echo 1', { variables: Object.fromEntries([['__proto__', 'x']]) }, ['variables.__proto__']],
    [
      'an undeclared variable',
      'sh',
      'echo 1',
      { variables: { GREETING: 'hi', UNDECLARED: 'x' } },
      ['variables.UNDECLARED'],
    ],
  ];

  it.each(attacks('').map(([name], index) => [name, index] as const))(
    '%s: 400 naming it at create, dry run and preview; nothing runs',
    async (_name, index) => {
      // Prepare
      const marker = join(dir, `pwned-${index}`);
      const [, interpreter, script, variables, fields] = attacks(marker)[index]!;
      const id = await action({ script, interpreter, variables: [{ name: 'GREETING' }] });
      const before = await deploymentCount();
      // Act
      const created = await call(deployer, 'POST', '/deployments', { action_id: id, ...web, ...variables });
      const dryRun = await call(deployer, 'POST', '/deployments', {
        action_id: id,
        ...web,
        ...variables,
        dry_run: true,
      });
      const preview = await call(deployer, 'POST', '/deployments/preview', { action_id: id, ...web, ...variables });
      // Assess
      for (const reply of [created, dryRun, preview]) {
        expect([reply.status, reply.json.error?.code, fieldsOf(reply.json)]).toEqual([400, 'VALIDATION_ERROR', fields]);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000)); // time for anything that was started to run
      expect(await deploymentCount()).toBe(before);
      expect(await exists(marker)).toBe(false);
    },
  );

  it('variable names like object members (valueOf, toString, constructor) are ordinary names: required means required', async () => {
    // Prepare: an action requiring three such names, one of them secret
    const id = await action({
      script: 'echo "v=$valueOf t=$toString c=$constructor"',
      variables: [
        { name: 'valueOf', required: true },
        { name: 'toString', required: true, secret: true },
        { name: 'constructor', required: true },
      ],
    });
    // Act: none given, then one missing, then all three
    const none = await call(deployer, 'POST', '/deployments', { action_id: id, ...web });
    const one = await call(deployer, 'POST', '/deployments', {
      action_id: id,
      ...web,
      variables: { valueOf: 'a', toString: 'b' },
    });
    const all = await call(deployer, 'POST', '/deployments', {
      action_id: id,
      ...web,
      variables: { valueOf: 'a', toString: 'b', constructor: 'c' },
    });
    // Assess
    expect([none.status, none.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(none.json.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'variables.constructor',
      'variables.toString',
      'variables.valueOf',
    ]);
    expect([one.status, one.json.error.details.fields.map((f: { field: string }) => f.field)]).toEqual([
      400,
      ['variables.constructor'],
    ]);
    expect([all.status, all.json.error]).toEqual([201, undefined]);
    const done = await finished(all.json.deployment_id);
    expect([done.state, done.plan.resolved_variables]).toEqual([
      'success',
      { valueOf: 'a', toString: '***', constructor: 'c' },
    ]);
    expect(await stdout(all.json.deployment_id)).toContain('v=a t=*** c=c');
  });

  it('says why an undeclared variable is refused', async () => {
    const id = await action({ script: 'echo 1', variables: [{ name: 'GREETING' }] });
    const reply = await call(deployer, 'POST', '/deployments/preview', {
      action_id: id,
      ...web,
      variables: { OTHER: 'x' },
    });
    expect(reply.json.error.details.fields).toEqual([
      {
        field: 'variables.OTHER',
        code: 'VALIDATION_ERROR',
        message: 'Variable OTHER is not declared by any action of the plan',
      },
    ]);
  });
});

describe('an action author cannot declare such a variable', () => {
  it('refuses NODE_OPTIONS (and its kin) at action create, version create and version update', async () => {
    // Prepare
    const id = await action({ script: 'echo 1', variables: [{ name: 'PORT' }] });
    // Act
    const atCreate = await call(e2e.admin, 'POST', '/actions', {
      slug: 'sec-bad',
      name: 'Bad',
      version: { version: '1.0.0', script: 'echo 1', variables: [{ name: 'NODE_OPTIONS' }] },
    });
    const atVersion = await call(e2e.admin, 'POST', `/actions/${id}/versions`, {
      version: '1.1.0',
      script: 'echo 1',
      variables: [{ name: 'PORT' }, { name: 'ld_preload' }],
    });
    const atUpdate = await call(e2e.admin, 'PUT', `/actions/${id}/versions/1.0.0`, {
      variables: [{ name: 'SHELLOPTS' }],
    });
    // Assess
    expect([atCreate.status, fieldsOf(atCreate.json)]).toEqual([400, ['version.variables.0.name']]);
    expect(atCreate.json.error.details.fields[0].message).toContain(
      "Variable NODE_OPTIONS is not allowed in a command's environment",
    );
    expect([atVersion.status, fieldsOf(atVersion.json)]).toEqual([400, ['variables.1.name']]);
    expect([atUpdate.status, fieldsOf(atUpdate.json)]).toEqual([400, ['variables.0.name']]);
    const stored = await call(e2e.admin, 'GET', `/actions/${id}/versions/1.0.0`);
    expect(stored.json.variables.map((v: { name: string }) => v.name)).toEqual(['PORT']);
  });
});

describe('redeploy', () => {
  it('refuses refused and undeclared overrides, and drops original variables the new plan no longer declares (plan warning)', async () => {
    // Prepare
    const id = await action({ script: 'echo "a=$A"', variables: [{ name: 'A' }] });
    const first = await call(e2e.admin, 'POST', '/deployments', {
      action_id: id,
      version_requirement: '^1',
      ...web,
      variables: { A: 'one' },
    });
    expect(first.status).toBe(201);
    await finished(first.json.deployment_id);
    expect(
      (
        await call(e2e.admin, 'POST', `/actions/${id}/versions`, {
          version: '1.1.0',
          script: 'echo "b=$B a=$A"',
          variables: [{ name: 'B' }],
        })
      ).status,
    ).toBe(201);
    // Act
    const refused = await call(e2e.admin, 'POST', `/deployments/${first.json.deployment_id}/redeploy`, {
      variables: { NODE_OPTIONS: '--require=/tmp/x.js' },
    });
    const undeclared = await call(e2e.admin, 'POST', `/deployments/${first.json.deployment_id}/redeploy`, {
      variables: { A: 'again' },
    });
    const again = await call(e2e.admin, 'POST', `/deployments/${first.json.deployment_id}/redeploy`, {
      variables: { B: 'two' },
    });
    // Assess
    expect([refused.status, fieldsOf(refused.json)]).toEqual([400, ['variables.NODE_OPTIONS']]);
    expect([undeclared.status, fieldsOf(undeclared.json)]).toEqual([400, ['variables.A']]);
    expect([again.status, again.json.error]).toEqual([201, undefined]);
    const done = await finished(again.json.id);
    expect(done.plan.warnings).toEqual([
      expect.stringMatching(/^Planned anew from the current catalog \(redeploy of /),
      'Variable A of the original deployment is dropped: the new plan does not declare it.',
    ]);
    expect(done.plan.resolved_variables).toEqual({ B: 'two' });
    expect(await stdout(again.json.id)).toMatch(/^b=two a=$/m);
  });
});

describe('redeploy and secrets', () => {
  it("another user's redeploy must give each secret again (400 naming it); the original triggerer's reuses it", async () => {
    // Prepare: two users who may create and redeploy; rita deploys a secret
    const role = await call(e2e.admin, 'POST', '/admin/roles', {
      name: 'redeployer',
      description: 'creates and redeploys',
    });
    await call(e2e.admin, 'POST', `/admin/roles/${role.json.id}/permissions`, {
      permissions: ['deployments:create', 'deployments:redeploy', 'deployments:read', 'actions:read', 'targets:read'],
    });
    await createUser('rita@example.com', 'rita-password', ['redeployer']);
    await createUser('sam@example.com', 'sam-password', ['redeployer']);
    const rita = (await api.login({ email: 'rita@example.com', password: 'rita-password' })).token;
    const sam = (await api.login({ email: 'sam@example.com', password: 'sam-password' })).token;
    const id = await action({
      script: 'echo "token length ${#TOKEN}"',
      variables: [{ name: 'TOKEN', secret: true, required: true }],
    });
    const first = await call(rita, 'POST', '/deployments', {
      action_id: id,
      ...web,
      prompted_values: { TOKEN: 'rita-secret-123' },
    });
    expect(first.status).toBe(201);
    await finished(first.json.deployment_id);
    // Act
    const without = await call(sam, 'POST', `/deployments/${first.json.deployment_id}/redeploy`, {});
    const withOwn = await call(sam, 'POST', `/deployments/${first.json.deployment_id}/redeploy`, {
      variables: { TOKEN: 'sam' },
    });
    const byTriggerer = await call(rita, 'POST', `/deployments/${first.json.deployment_id}/redeploy`, {});
    // Assess
    expect([without.status, without.json.error?.details?.fields]).toEqual([
      400,
      [
        {
          field: 'variables.TOKEN',
          code: 'VALIDATION_ERROR',
          message:
            'Secret variable TOKEN must be given again: only the original triggerer, or an admin signed in as a user (not with an API key, OAuth token or trigger), may reuse it',
        },
      ],
    ]);
    expect([withOwn.status, byTriggerer.status]).toEqual([201, 201]);
    expect((await finished(withOwn.json.id)).state).toBe('success');
    expect((await finished(byTriggerer.json.id)).state).toBe('success');
    expect(await stdout(withOwn.json.id)).toContain('token length 3');
    expect(await stdout(byTriggerer.json.id)).toContain('token length 15');
  });
});

describe('secrets in command records', () => {
  it('keeps a secret sealed in the raw command item; only the agent that runs it sees the value', async () => {
    // Prepare
    const id = await action({
      script: 'echo "token length ${#TOKEN}"',
      variables: [{ name: 'TOKEN', secret: true, required: true }],
    });
    // Act
    const created = await call(deployer, 'POST', '/deployments', {
      action_id: id,
      ...web,
      variables: { TOKEN: 'plaintext-secret-42' },
    });
    const done = await finished(created.json.deployment_id);
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: e2e.stack.dynamoEndpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
    );
    const commandId = commandIdOf(done.plan.steps[0].id, 1);
    const { Item } = await db.send(
      new GetCommand({ TableName: e2e.stack.tables['MainTable']!, Key: { pk: `COMMAND#${commandId}`, sk: 'COMMAND' } }),
    );
    // Assess
    expect(done.state).toBe('success');
    expect(Item?.['secretVariables']).toEqual(['TOKEN']);
    expect(String(Item?.['variables']?.TOKEN)).toMatch(/^enc:/);
    expect(JSON.stringify(Item)).not.toContain('plaintext-secret-42');
    expect(await stdout(created.json.deployment_id)).toContain('token length 19');
  });
});

describe('a deployment runs what was planned', () => {
  const waitingFor = async (requestId: string) => {
    for (const until = Date.now() + 40_000; ; await new Promise((r) => setTimeout(r, 250))) {
      const request = (
        (await call(e2e.admin, 'GET', '/deployments/pending')).json as {
          id: string;
          status: string;
          deployment_id?: string;
        }[]
      ).find((r) => r.id === requestId);
      if (request?.deployment_id !== undefined) return request.deployment_id;
      if (Date.now() > until) throw new Error(`request ${requestId} was not dispatched: ${JSON.stringify(request)}`);
    }
  };

  it('a version edited after the deployment was queued still runs the planned script; a redeploy plans anew and says so', async () => {
    // Prepare: nothing runs while the capacity is 0, so the deployment waits as a pending request
    const id = await action({ script: 'echo "planned script"' });
    expect((await call(e2e.admin, 'PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
    try {
      const queued = await call(deployer, 'POST', '/deployments', { action_id: id, ...web });
      expect([queued.status, queued.json.pending]).toEqual([202, true]);
      // Act: the author changes the version's script while the deployment waits, then capacity returns
      const edited = await call(e2e.admin, 'PUT', `/actions/${id}/versions/1.0.0`, { script: 'echo "edited script"' });
      expect(edited.status).toBe(200);
      expect((await call(e2e.admin, 'PUT', '/admin/orchestration', { instances: 4 })).status).toBe(200);
      const deploymentId = await waitingFor(queued.json.pending_request_id);
      // Assess: the planned script ran, not the edited one
      expect((await finished(deploymentId)).state).toBe('success');
      const output = await stdout(deploymentId);
      expect(output).toContain('planned script');
      expect(output).not.toContain('edited script');
      // A redeploy plans anew from the catalog: it runs the edited script and its plan says so
      const redeployed = await call(e2e.admin, 'POST', `/deployments/${deploymentId}/redeploy`, {});
      expect(redeployed.status).toBe(201);
      const again = await finished(redeployed.json.id);
      expect(again.plan.warnings).toEqual([
        expect.stringMatching(
          /^Planned anew from the current catalog \(redeploy of .*\): .*its script changed since the original ran/,
        ),
      ]);
      expect(await stdout(redeployed.json.id)).toContain('edited script');
    } finally {
      await call(e2e.admin, 'PUT', '/admin/orchestration', { instances: 4 });
    }
  });

  it('a version deleted while its deployment runs does not stop the deployment’s later attempts', async () => {
    // Prepare: the first attempt fails and is retried after the version is gone
    const marker = join(dir, 'attempted-once');
    const id = await action({
      script: `if [ -f ${marker} ]; then echo "second attempt"; else touch ${marker}; sleep 2; exit 3; fi`,
    });
    const created = await call(deployer, 'POST', '/deployments', { action_id: id, ...web, max_retries: 1 });
    expect(created.status).toBe(201);
    // Act: delete the action version (and the action) while the first attempt runs
    await new Promise((r) => setTimeout(r, 500));
    const removed = await call(e2e.admin, 'DELETE', `/actions/${id}`);
    // Assess: the retry runs the pinned script
    expect(removed.status).toBe(204);
    const done = await finished(created.json.deployment_id);
    expect(done.state).toBe('success');
    expect(await stdout(created.json.deployment_id)).toContain('second attempt');
  });
});
