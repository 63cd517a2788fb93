// The streaming function with the log stream's timing as it was before issue 36 (a read every 100 ms whatever
// happens, the deployment re-read every 2 s), for A/B runs of the benchmarks on the same machine at the same time
// (`npm run bench:output -- LINES INTERVAL_MS before`). Everything else is the service's own router.
import { LOG_STREAM_TIMING } from '../../domain/streams/deployment-log.js';
import type { LocalStreamHandler } from '../../local/stream-runner.js';
import { installLambdaStreamingShim } from '../../local/lambda-streaming.js';

export const streamHandlerBefore = async (): Promise<LocalStreamHandler> => {
  installLambdaStreamingShim(); // before the router is built: it wraps itself in awslambda.streamifyResponse
  const [{ streamRouter }, { baseShell }, deploymentLogs, { streamRoutes }, { logStreamDeps }] = await Promise.all([
    import('../../functions/shared/stream.js'),
    import('../../functions/shared/wiring.js'),
    import('../../functions/streams/deployment-logs.js'),
    import('../../functions/streams/routes.js'),
    import('../../functions/shared/stream-wiring.js'),
  ]);
  const before = {
    ...LOG_STREAM_TIMING,
    quietPollMs: LOG_STREAM_TIMING.pollMs,
    quietRecheckMs: LOG_STREAM_TIMING.recheckMs,
  };
  const routes = streamRoutes.map((route) =>
    route.path === '/api/v1/deployments/{id}/logs'
      ? { ...route, handler: deploymentLogs.makeHandler(logStreamDeps, before) }
      : route,
  );
  return streamRouter(routes, baseShell) as unknown as LocalStreamHandler;
};
