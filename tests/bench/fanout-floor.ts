// What this machine allows a fan-out round, whatever the service does (issue 37): the CPU of the parts every
// command needs and no design removes, measured alone, then what they add up to on the machine's cores.
//
//  1. The agent's process creation: the agent's own `startProcess` (agent/runner.ts) runs `echo ok` under sh (an
//     action's default interpreter), as a command of the fan-out does (its script file written, its process group
//     spawned, its output read), COUNT times, 8 at once. The CPU of this process (the agent's side) and of the
//     children it waited for (the shells) are read apart. (bench:fanout counts the agents' own CPU, not the shells'.)
//  2. DynamoDB Local's CPU for the three calls a command cannot do without (the floor the issue names: store the
//     command, hand it over, store its completion): the launch's conditional put (`enqueuePushed`), the agent
//     token's read (`agentOfToken`), the completing write (`completeAs`), through the service's own repositories on
//     the service's table (its five indexes), COUNT commands, 32 calls at once as the engine launches; a first pass
//     warms the JVM, the second is measured. The emulator's CPU is read from /proc, this process's (the AWS SDK's
//     side of each call, which the functions pay) apart.
//
// Then the arithmetic: COUNT commands × (1 + 2) on the machine's cores, against the 1,000 agents in 10 s and
// its ≤ 10 ms of server CPU per command. Nothing of serverless-offline, SQS, the event store or the engine is in it:
// it is a floor, not a round.
//
// `npm run bench:fanout-floor [-- COUNT]` (default 1000). Linux only (/proc).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startProcess } from '../../agent/runner.js';
import { eachLimited } from '../../domain/shared/concurrency.js';
import type { Command, Target } from '../../domain/targets/types.js';
import { DynamoCommandRepository } from '../../infra/dynamodb/command-repository.js';
import { DynamoTargetRepository } from '../../infra/dynamodb/target-repository.js';
import { ensureTables } from '../../local/bootstrap.js';
import { LOCAL_CREDENTIALS, startDynamo } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { loadServiceDefinition } from '../../local/service-definition.js';
import { aCommand } from '../fakes/commands.js';
import { printResults, type Figure } from './results.js';
import { cpuSeconds } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const COUNT = Number(process.argv[2] ?? 1000);
if (!Number.isInteger(COUNT) || COUNT < 10 || COUNT > 10_000)
  throw new Error(`COUNT must be a whole number from 10 to 10000 (got ${process.argv[2]})`);
const AGENT_CONCURRENCY = 8;
/** As the engine launches (domain/deployments/engine.ts, LAUNCH_CONCURRENCY). */
const CALL_CONCURRENCY = 32;
const CORES = cpus().length;

/** 0, 1, ..., count - 1. */
const indexes = (count: number) => Array.from({ length: count }, (_, i) => i);
const ms = (seconds: number, per: number) => (seconds * 1000) / per;
const fixed = (value: number) => value.toFixed(2);

const agentSide = async (): Promise<{ own: number; children: number; wall: number }> => {
  const dir = await mkdtemp(join(tmpdir(), 'fanout-floor-'));
  const run = async (i: number) => {
    const running = await startProcess({
      interpreter: 'sh',
      script: 'echo ok',
      cwd: join(dir, `c${i}`),
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
      timeoutSeconds: null,
      killGraceMs: 1000,
      onOutput: () => undefined,
    });
    const result = await running.done;
    if (result.exitCode !== 0) throw new Error(`echo ok ended with ${result.exitCode}: ${result.errorMessage}`);
  };
  try {
    await eachLimited(indexes(20), AGENT_CONCURRENCY, run); // the first spawns load what spawning needs
    const before = await cpuSeconds('self');
    const started = performance.now();
    await eachLimited(indexes(COUNT), AGENT_CONCURRENCY, (i) => run(i + 20));
    const wall = (performance.now() - started) / 1000;
    const after = await cpuSeconds('self');
    return { own: after.own - before.own, children: after.children - before.children, wall };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

const dynamoSide = async (): Promise<{ emulator: number; client: number; wall: number; calls: number }> => {
  const dynamo = await startDynamo({ port: await freePort() });
  const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    const definition = await loadServiceDefinition();
    const names = await ensureTables(client, definition.tables);
    const tableName = Object.values(names)[0]!;
    const db = DynamoDBDocumentClient.from(client);
    const commands = new DynamoCommandRepository(db, tableName);
    const targets = new DynamoTargetRepository(db, tableName);
    const now = new Date().toISOString();
    const targetOf = (i: number): Target => ({
      id: `target-${i}`,
      shortId: `t${i}`,
      name: `bench-${String(i).padStart(4, '0')}`,
      hostname: `bench-${i}`,
      os: 'linux',
      arch: 'x64',
      agentVersion: '1.0.0',
      tags: [{ key: 'role', value: 'bench' }],
      tenantId: null,
      environmentId: null,
      agentTokenHash: `hash-${i}`,
      lastHeartbeatAt: now,
      connectionId: `conn-${i}`,
      createdAt: now,
      updatedAt: now,
    });
    await eachLimited(indexes(COUNT), CALL_CONCURRENCY, (i) => targets.create(targetOf(i)));
    const round = async (deploymentId: string) => {
      const commandOf = (i: number): Command =>
        aCommand({ id: randomUUID(), targetId: `target-${i}`, deploymentId, timeoutSeconds: 300 });
      const launched = Array.from({ length: COUNT }, (_, i) => commandOf(i));
      await eachLimited(indexes(COUNT), CALL_CONCURRENCY, async (i) => {
        const stored = await commands.enqueuePushed(launched[i]!, {
          connectionId: `conn-${i}`,
          instance: 'bench',
          at: new Date().toISOString(),
        });
        if (!stored) throw new Error('the launch put was refused');
      });
      await eachLimited(indexes(COUNT), CALL_CONCURRENCY, async (i) => {
        if ((await targets.agentOfToken(`hash-${i}`)) === undefined) throw new Error('the token was not found');
        const at = new Date().toISOString();
        const done = await commands.completeAs(
          `target-${i}`,
          launched[i]!.id,
          { exitCode: 0, startedAt: at, completedAt: at, errorMessage: null },
          0,
          {
            tail: 'ok\n',
            seqWas: -1,
            chunks: [{ seq: 0, stream: 'stdout', data: 'ok\n' }],
            receivedAt: at,
          },
        );
        if (!done.completed) throw new Error('the completing write was refused');
      });
    };
    await round('warm-up');
    const before = { emulator: await cpuSeconds(dynamo.pid!), client: await cpuSeconds('self') };
    const started = performance.now();
    await round('measured');
    const wall = (performance.now() - started) / 1000;
    const after = { emulator: await cpuSeconds(dynamo.pid!), client: await cpuSeconds('self') };
    return {
      emulator: after.emulator.own - before.emulator.own,
      client: after.client.own - before.client.own,
      wall,
      calls: COUNT * 3,
    };
  } finally {
    client.destroy();
    await dynamo.stop();
  }
};

console.log(
  `The floor of a fan-out of ${COUNT} commands on this machine (${CORES} cores, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at the start)`,
);
const agent = await agentSide();
const agentMs = ms(agent.own, COUNT);
const shellMs = ms(agent.children, COUNT);
console.log(
  `\n1. The agent's process creation (agent/runner.ts startProcess, sh 'echo ok', ${AGENT_CONCURRENCY} at once):\n` +
    `   agent's side ${fixed(agentMs)} ms CPU per command, the shell itself (dash) ${fixed(shellMs)} ms; ` +
    `${COUNT} in ${agent.wall.toFixed(1)} s`,
);
const dynamo = await dynamoSide();
const emulatorMs = ms(dynamo.emulator, COUNT);
const sdkMs = ms(dynamo.client, COUNT);
console.log(
  `\n2. DynamoDB Local (the stack's JVM options), 3 calls per command (launch put, token read, completing write), ` +
    `${CALL_CONCURRENCY} at once, the second of two passes:\n` +
    `   emulator ${fixed(emulatorMs)} ms CPU per command (${fixed(ms(dynamo.emulator, dynamo.calls))} ms per call); ` +
    `the AWS SDK's side ${fixed(sdkMs)} ms per command; ${dynamo.calls} calls in ${dynamo.wall.toFixed(1)} s`,
);
const floorMs = agentMs + shellMs + emulatorMs + sdkMs;
const floorSeconds = (commands: number) => (commands * floorMs) / 1000 / CORES;
console.log(
  `\n   floor: ${fixed(floorMs)} ms CPU per command; on ${CORES} cores that is at least ` +
    `${floorSeconds(1000).toFixed(1)} s for 1,000 commands (issue 37: ≤ 10 s) and ${floorSeconds(100).toFixed(2)} s ` +
    `for 100 (≤ 1.5 s), with nothing else of the service running;\n` +
    `   server CPU: DynamoDB Local alone ${fixed(emulatorMs)} ms per command at 3 calls (issue 37: ≤ 10 ms for the whole ` +
    `stack), ${fixed(ms(dynamo.emulator, dynamo.calls) * 5)} ms at the issue's 5 calls`,
);
const figures: Figure[] = [
  { bench: 'fanout-floor', name: 'agent process creation, CPU per command', value: agentMs, unit: 'ms', goal: '' },
  {
    bench: 'fanout-floor',
    name: 'DynamoDB Local, CPU per call',
    value: ms(dynamo.emulator, dynamo.calls),
    unit: 'ms',
    goal: '',
  },
  { bench: 'fanout-floor', name: 'floor CPU per command', value: floorMs, unit: 'ms', goal: '' },
  {
    bench: 'fanout-floor',
    name: '1,000 commands on this machine, at least',
    value: floorSeconds(1000),
    unit: 's',
    goal: '10 s',
  },
];
printResults(figures);
