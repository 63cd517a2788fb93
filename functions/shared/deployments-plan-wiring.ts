// The composition root, deployment plans part: what resolving a create body needs (the catalog, targets,
// tenants, environments, freezes, the secret cipher for secret variables, random step ids). Built from the other
// contexts' wiring, so it shares their adapters.
import type { PlanDeps } from '../../domain/deployments/plan/command.js';
import { systemUuids } from '../../infra/system/uuids.js';
import { catalogDeps } from './catalog-wiring.js';
import { secretCipher } from './identity-wiring.js';
import { once } from './once.js';
import { targetsDeps } from './targets-wiring.js';
import { tenancyDeps } from './tenancy-wiring.js';
import { infra } from './wiring.js';

export const planDeps = once((): PlanDeps => {
  const catalog = catalogDeps();
  const tenancy = tenancyDeps();
  return {
    actions: catalog.actions,
    sequences: catalog.sequences,
    solutions: catalog.solutions,
    targets: targetsDeps().targets,
    tenants: tenancy.tenants,
    environments: tenancy.environments,
    freezes: tenancy.freezes,
    cipher: secretCipher(),
    uuids: systemUuids,
    clock: infra().clock,
  };
});

/** What the preview endpoint uses (the same as create's). */
export const previewDeps = planDeps;
