// A command as the engine stores it when it launches a step (domain/targets/types.ts), for tests and benchmarks that
// write commands through the repositories: a queued `echo ok` under sh, no output yet; the caller names what matters.
import type { Command } from '../../domain/targets/types.js';

export const aCommand = (fields: Pick<Command, 'id' | 'targetId' | 'deploymentId'> & Partial<Command>): Command => ({
  stepId: `${fields.id}-step`,
  attempt: 1,
  action: { id: 'action-1', slug: 'echo', version: '1.0.0' },
  script: 'echo ok',
  interpreter: 'sh',
  variables: {},
  secretVariables: [],
  timeoutSeconds: null,
  status: 'queued',
  createdAt: new Date().toISOString(),
  deliveredAt: null,
  cancelRequestedAt: null,
  outputSeq: -1,
  result: null,
  ...fields,
});
