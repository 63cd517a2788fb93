// The queue that wakes the execution engine, shared by the functions that start deployments (create, dispatch),
// receive agent results (targets) and run the engine (orchestrator).
import { SqsEngineQueue } from '../../infra/sqs/engine-queue.js';
import { once } from './once.js';
import { infra, sqs } from './wiring.js';

export const engineQueue = once(() => new SqsEngineQueue(sqs(), infra().config.ORCHESTRATOR_QUEUE_URL));
