// stream -> openResourceFeed -> followResourceChanges (domain/streams: the change feed, polled, diffViews) -> SSE
//
// GET /api/v1/sse/{resource_type}?sse_token=... (decisions.md "Events and live streams"): the changes of
// `deployments`, `pending_deployments` or `targets` the caller may see. Targets and pending requests are listed
// once, deployments only for a snapshot; after that each poll reads only what the change feed (gsi3) says was
// written since the last look, so an idle stream costs one small query every 2 s (every second while things
// change) whatever the table holds. Each message is one `data:` line of {event, data}, `event` one of ping,
// created, updated, deleted and `data` {type: event, resource_type, id, record} (`record` = the resource's list
// view; for deleted, the last one seen).
// The first listing is taken before the ping, so every change after the ping is reported; `?snapshot=true` sends
// the records of that listing as `created` first. `id:` counts the connection's messages (no resuming).
import { setTimeout as pause } from 'node:timers/promises';
import * as v from 'valibot';
import type { Sleep } from '../../domain/streams/ports.js';
import {
  followResourceChanges,
  openResourceFeed,
  RESOURCE_STREAM_TIMING,
  resourceTypeOf,
  type ResourceFeed,
  type ResourceStreamTiming,
} from '../../domain/streams/resource-changes.js';
import { resourceSources, type ResourceStreamDeps } from '../../domain/streams/resource-sources.js';
import type { Clock } from '../../domain/shared/ports.js';
import { agentRelease } from '../../infra/config.js';
import { Uuid } from '../shared/schemas.js';
import { sseFrames } from '../shared/sse.js';
import { sseTokenOnly, stream } from '../shared/stream.js';
import { guardedStream, warn } from '../shared/stream-guard.js';
import { resourceStreamDeps } from '../shared/stream-wiring.js';
import { SERVER_VERSION } from '../shared/version.js';

/** The followable resources, their targets' agents compared with this build and the release it ships. */
export const RESOURCE_SOURCES = resourceSources({ server: SERVER_VERSION, agentRelease });

const sleep: Sleep = (milliseconds, signal) => pause(milliseconds, undefined, { signal });

/** The SSE frames of one resource stream (domain/streams/resource-changes.ts says what and when). */
export const resourceFrames = (
  clock: Clock,
  feed: ResourceFeed,
  signal: AbortSignal,
  timing: ResourceStreamTiming = RESOURCE_STREAM_TIMING,
  wait: Sleep = sleep,
): AsyncGenerator<string> => sseFrames(followResourceChanges(clock, feed, signal, timing, { wait, warn }));

const Params = v.object({ resource_type: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

const Query = v.object({
  sse_token: v.optional(v.string()),
  snapshot: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((value) => value === 'true'),
    ),
  ),
  tenant_id: v.optional(Uuid),
});

export const makeHandler = (deps: () => ResourceStreamDeps, timing: ResourceStreamTiming = RESOURCE_STREAM_TIMING) =>
  stream(
    {
      operationId: 'stream_resource_changes',
      summary:
        'Changes of deployments, pending_deployments or targets live (Server-Sent Events); ?sse_token= only, ?snapshot=true sends the current records first',
      tags: ['events'],
      permission: 'authenticated',
      params: Params,
      query: Query,
      responses: {
        200: {
          description:
            'An event stream: one `data:` line of {event, data} per message (ping, created, updated, deleted), `id:` a per-connection counter',
        },
        401: {
          description:
            'INVALID_TOKEN: no, unknown, expired or used sse_token (the Authorization header is not accepted)',
        },
        403: {
          description:
            'INSUFFICIENT_PERMISSIONS: deployments:read, pending_deployments:read or targets:read, by resource type',
        },
        404: { description: 'NOT_FOUND: resource_type is not deployments, pending_deployments or targets' },
        429: {
          description: 'Plain text, Retry-After: the general rate limit, or STREAMS_PER_USER streams already open',
        },
      },
    },
    async ({ params, query, headers }) => {
      // An unknown type is checked first, so a mistyped path does not use up the single-use token.
      const resourceType = resourceTypeOf(params.resource_type);
      sseTokenOnly(query.sse_token, headers);
      const { caller, feed } = await openResourceFeed(deps(), RESOURCE_SOURCES, {
        resourceType,
        token: query.sse_token,
        snapshot: query.snapshot ?? false,
        tenantId: query.tenant_id,
      });
      return guardedStream(deps().guard, caller, (signal) => resourceFrames(deps().clock, feed, signal, timing));
    },
  );

export const handler = makeHandler(resourceStreamDeps);
