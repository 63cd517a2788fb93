// Runs a scheduled function locally the way an EventBridge schedule does: every `intervalMs` (runs never
// overlap: a slow run delays the next). A failed run is logged; the next one comes all the same.
import { lambdaContext } from './lambda-context.js';
import type { Context } from 'aws-lambda';

export type ScheduledHandler = (event: Record<string, unknown>, context: Context) => Promise<unknown>;

export interface Schedule {
  stop(): Promise<void>;
}

export const startSchedule = (options: {
  functionName: string;
  handler: ScheduledHandler;
  intervalMs: number;
  log?: (line: string) => void;
}): Schedule => {
  const log = options.log ?? (() => undefined);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = async () => {
    try {
      await options.handler(
        { source: 'local.schedule', 'detail-type': 'Scheduled Event', time: new Date().toISOString() },
        lambdaContext(options.functionName),
      );
    } catch (error) {
      log(`${options.functionName}: scheduled run failed: ${(error as Error).message}`);
    }
  };
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = run().finally(next);
    }, options.intervalMs);
  };
  next();
  return {
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
};
