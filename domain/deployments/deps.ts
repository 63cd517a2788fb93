// The ports the deployments context's use cases receive (wired in functions/shared/deployments-wiring.ts).
import type { Clock, IdGenerator } from '../shared/ports.js';
import type { DeploymentRepository, DispatchQueue, Orchestration, PendingRequestRepository } from './ports.js';

export interface DeploymentsDeps {
  readonly deployments: DeploymentRepository;
  readonly orchestration: Orchestration;
  readonly pending: PendingRequestRepository;
  readonly dispatch: DispatchQueue;
  readonly clock: Clock;
  readonly ids: IdGenerator;
}
