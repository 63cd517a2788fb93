// The prices of docs/cost.md ("Prices used": us-east-1 list prices, on-demand, no free tier) and the money of a
// window of counted DynamoDB calls, shared by the live-view benchmarks (idle-stream.ts, idle-viewer.ts).
import { readFile } from 'node:fs/promises';
import type { Tally } from './aws-counter.js';

export const PRICE = {
  lambdaRequest: 0.2e-6,
  gbSecond: 0.0000133334,
  httpApiRequest: 1e-6,
  cloudFrontRequest: 1e-6,
  wsMessage: 1e-6,
  wsConnectionMinute: 0.25e-6,
  wru: 0.625e-6,
  rru: 0.125e-6,
} as const;

/** DynamoDB calls, units and their money in a window of counted operations (SQS left out). */
export const dynamoOf = (tallies: ReadonlyMap<string, Tally>) => {
  let calls = 0;
  let wru = 0;
  let rru = 0;
  for (const [operation, tally] of tallies) {
    if (!operation.startsWith('dynamodb ')) continue;
    calls += tally.calls;
    wru += tally.wru;
    rru += tally.rru;
  }
  return { calls, wru, rru, dollars: wru * PRICE.wru + rru * PRICE.rru };
};

/** A function's memory size in MB as serverless.yml sets it (its own `memorySize`, else the provider's). */
export const memorySizeOf = async (functionName: string): Promise<number> => {
  const yml = await readFile(new URL('../../serverless.yml', import.meta.url), 'utf8');
  const provider = /^ {2}memorySize: (\d+)/m.exec(yml)?.[1];
  const block = new RegExp(`^ {2}${functionName}:\\n((?: {4}.*\\n|\\s*\\n)*)`, 'm').exec(yml)?.[1] ?? '';
  const own = /^ {4}memorySize: (\d+)/m.exec(block)?.[1];
  const mb = Number(own ?? provider);
  if (!Number.isInteger(mb)) throw new Error(`no memorySize for ${functionName} in serverless.yml`);
  return mb;
};
