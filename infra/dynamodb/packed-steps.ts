// A plan's steps as one deflated JSON binary attribute (`packedSteps`) beside the rest of the plan, on a deployment's
// item and in a pending request's draft: 1,000 steps are ~540 KB as DynamoDB maps (over the 400 KB item limit) and
// ~55 KB packed, in ~4 ms (docs/decisions.md "Plans of up to 2,000 steps"). Items written before hold
// `plan.steps` as maps and read as they are.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Plan, PlanStep } from '../../domain/deployments/types.js';
import type { Item } from './records.js';

/** The attribute that holds the packed steps (removed again on the way out). */
export const PACKED_STEPS = 'packedSteps';

/** `record` with its plan's steps packed: `plan` without `steps`, and the steps deflated in `packedSteps`. */
export const packSteps = <R extends { readonly plan: Plan }>(record: R): Item => {
  const { steps, ...plan } = record.plan;
  return { ...record, plan, [PACKED_STEPS]: deflateRawSync(JSON.stringify(steps), { level: 3 }) };
};

/** An item (or a draft) as written by packSteps, or as written before it: its plan with its steps. */
export const unpackSteps = (item: Item): Item => {
  const packed = item[PACKED_STEPS];
  if (!(packed instanceof Uint8Array)) return item;
  const { [PACKED_STEPS]: _packed, ...rest } = item;
  const steps = JSON.parse(inflateRawSync(packed).toString('utf8')) as PlanStep[];
  return { ...rest, plan: { ...(rest['plan'] as Item), steps } };
};
