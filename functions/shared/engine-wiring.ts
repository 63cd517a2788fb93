// The composition root, execution engine part: what `advance` needs (deployments, commands, targets, action
// scripts, the secret cipher) and the queue that wakes it.
import type { EngineDeps, StepScripts } from '../../domain/deployments/engine.js';
import { isTransientError } from '../../infra/transient.js';
import { catalogDeps } from './catalog-wiring.js';
import { deploymentsDeps } from './deployments-wiring.js';
import { secretCipher } from './identity-wiring.js';
import { once } from './once.js';
import { deploymentEvents } from './stream-wiring.js';
import { engineQueue } from './queues-wiring.js';
import { agentDispatch, targetsDeps } from './targets-wiring.js';
import { deploymentWebhooks } from './webhooks-wiring.js';
import { infra, serviceMetrics } from './wiring.js';

const scripts = once((): StepScripts => ({
  find: async (actionId, version) => {
    const found = await catalogDeps().actions.find(actionId);
    const v = found?.versions.find((candidate) => candidate.version === version);
    return v === undefined
      ? undefined
      : {
          script: v.script,
          interpreter: v.interpreter,
          rollbackScript: v.rollbackScript,
          timeoutSeconds: v.timeoutSeconds,
        };
  },
}));

export const engineDeps = once((): EngineDeps => {
  const deployments = deploymentsDeps();
  const targets = targetsDeps();
  return {
    deployments: deployments.deployments,
    orchestration: deployments.orchestration,
    dispatch: deployments.dispatch,
    commands: targets.commands,
    targets: targets.targets,
    scripts: scripts(),
    cipher: secretCipher(),
    engine: engineQueue(),
    clock: infra().clock,
    // Each pass's events, and what an ended deployment's outbox entry still owes (publish-pass.ts, outbox.ts).
    events: deploymentEvents(),
    // The engine's passes and outbox are retried until they succeed: a failed emission fails the pass.
    webhooks: deploymentWebhooks(),
    metrics: serviceMetrics(),
    limits: {
      maxFailedPasses: infra().config.ENGINE_MAX_FAILED_PASSES,
      maxDeploymentSeconds: infra().config.DEPLOYMENT_MAX_SECONDS,
    },
    isTransient: isTransientError,
    agents: agentDispatch(),
  };
});
