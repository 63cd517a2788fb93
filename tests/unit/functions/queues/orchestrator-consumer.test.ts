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
