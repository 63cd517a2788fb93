// The orchestrator consumer and poison: a message whose pass fails is reported failed (SQS retries it) until the
// engine gives up on the deployment; then the message is consumed, never retried into the dead-letter queue.
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../../../domain/deployments/engine.js';
import type { Plan } from '../../../../domain/deployments/types.js';
import { makeHandler } from '../../../../functions/queues/orchestrator-consumer.js';
import { aDeployment, deploymentsFakes } from '../../../fakes/deployments.js';
import { noAgentChannel } from '../../../../domain/targets/agent-dispatch.js';
import { FakeCommandRepository } from '../../../fakes/targets.js';

const message = (id: string): SQSEvent =>
  ({
    Records: [{ messageId: id, body: JSON.stringify({ deployment_id: aDeployment().id, check: false }) }],
  }) as unknown as SQSEvent;

describe('orchestrator consumer', () => {
  it("hands the pass the commands its batch's messages report completed, one pass per deployment", async () => {
    // Prepare: a deployment running one step whose command the index lists delivered, while the table has it done
    const fakes = deploymentsFakes(1);
    const deployment = aDeployment();
    await fakes.orchestration.start(deployment);
    const commands = new FakeCommandRepository();
    const lists: string[] = [];
    const reads: string[] = [];
    const deps: EngineDeps = {
      deployments: fakes.deployments,
      orchestration: fakes.orchestration,
      dispatch: fakes.dispatch,
      commands: Object.assign(Object.create(commands) as FakeCommandRepository, {
        listByDeployment: async (id: string) => (lists.push(id), commands.listByDeployment(id)),
        get: async (id: string) => (reads.push(id), commands.get(id)),
      }),
      agents: noAgentChannel(commands),
      targets: { getMany: async () => [] },
      scripts: {
        find: async () => ({ script: 'true', interpreter: 'sh', rollbackScript: null, timeoutSeconds: null }),
      },
      cipher: { encrypt: (v) => v, decrypt: (v) => v },
      engine: { wake: async () => undefined },
      clock: fakes.clock,
    };
    const handler = makeHandler(() => deps);
    const body = (extra: Record<string, unknown>) => JSON.stringify({ deployment_id: deployment.id, ...extra });
    // Act: three messages for one deployment, two naming commands the index does not hold
    const answer = await handler({
      Records: [
        { messageId: 'a', body: body({ command_id: 'c-1' }) },
        { messageId: 'b', body: body({ check: false }) },
        { messageId: 'c', body: body({ command_id: 'c-2' }) },
      ],
    } as unknown as SQSEvent);
    // Assess: one pass, and both named commands read from the table
    expect(answer.batchItemFailures).toEqual([]);
    expect(lists).toEqual([deployment.id]);
    expect(reads.sort()).toEqual(['c-1', 'c-2']);
  });

  it('reports a failing pass for retry, and consumes the message once the engine gave up on the deployment', async () => {
    // Prepare: a deployment whose stored plan cannot be read, so every pass throws.
    const fakes = deploymentsFakes(1);
    await fakes.orchestration.start(aDeployment({ plan: { steps: null } as unknown as Plan }));
    const deps: EngineDeps = {
      deployments: fakes.deployments,
      orchestration: fakes.orchestration,
      dispatch: fakes.dispatch,
      commands: new FakeCommandRepository(),
      agents: noAgentChannel(new FakeCommandRepository()),
      targets: { getMany: async () => [] },
      scripts: { find: async () => undefined },
      cipher: { encrypt: (v) => v, decrypt: (v) => v },
      engine: { wake: async () => undefined },
      clock: fakes.clock,
      limits: { maxFailedPasses: 2, maxDeploymentSeconds: 604_800 },
    };
    const handler = makeHandler(() => deps);
    // Act
    const first = await handler(message('m1'));
    const second = await handler(message('m1'));
    // Assess
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect(second.batchItemFailures).toEqual([]);
    expect((await fakes.deployments.get(aDeployment().id))?.state).toBe('failed');
    expect(fakes.orchestration.held.size).toBe(0);
  });
});
