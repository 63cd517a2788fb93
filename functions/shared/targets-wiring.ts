// The composition root, targets part: targets, enrollment, agent tokens and the commands agents run. Importing
// identity-wiring installs the user authenticator; this module installs the agent one.
import { authenticateAgent } from '../../domain/targets/agent-protocol.js';
import type { TargetsDeps } from '../../domain/targets/deps.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoCommandRepository } from '../../infra/dynamodb/command-repository.js';
import { DynamoEnvironmentRepository } from '../../infra/dynamodb/environment-repository.js';
import { DynamoEnrollmentTokenRepository, DynamoTargetRepository } from '../../infra/dynamodb/target-repository.js';
import { DynamoTenantRepository } from '../../infra/dynamodb/tenant-repository.js';
import { systemSleeper } from '../../infra/system/sleeper.js';
import { useDefaultAgentAuthenticator } from './http.js';
import './identity-wiring.js';
import { outputToLogEvents } from '../../domain/deployments/publish.js';
import { once } from './once.js';
import { deploymentEvents } from './stream-wiring.js';
import { engineQueue } from './queues-wiring.js';
import { ids, infra } from './wiring.js';

export const targetsDeps = once((): TargetsDeps => {
  const { config: cfg, db, clock } = infra();
  return {
    targets: new DynamoTargetRepository(db, cfg.TABLE_NAME),
    enrollmentTokens: new DynamoEnrollmentTokenRepository(db, cfg.TABLE_NAME),
    commands: new DynamoCommandRepository(db, cfg.TABLE_NAME),
    tenants: new DynamoTenantRepository(db, cfg.TABLE_NAME),
    environments: new DynamoEnvironmentRepository(db, cfg.TABLE_NAME),
    random: randomTokens,
    ids: ids(),
    clock,
    sleeper: systemSleeper,
    settings: { pollIntervalMs: cfg.AGENT_POLL_INTERVAL_MS },
    listener: {
      // Each line of output becomes a log event of the deployment's stream, as it arrives.
      output: async (command, chunks) => {
        const target = await targetsDeps().targets.get(command.targetId);
        await deploymentEvents().append(command.deploymentId, outputToLogEvents(command, target?.name ?? null, chunks, infra().clock.now().toISOString()));
      },
      // A finished command moves its deployment on at once.
      completed: async (command) => engineQueue().wake(command.deploymentId),
    },
  };
});

useDefaultAgentAuthenticator(() => (authorization) => authenticateAgent(targetsDeps(), authorization));
