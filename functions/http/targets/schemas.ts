import * as v from 'valibot';
import {
  MAX_OUTPUT_BYTES,
  MAX_OUTPUT_CHUNKS,
  MAX_OUTPUT_LINES,
  outputBytes,
  outputLineCount,
} from '../../../protocol/output-limits.js';

export const TagKey = v.pipe(
  v.string(),
  v.trim(),
  v.regex(
    /^[A-Za-z0-9][A-Za-z0-9_.\/-]{0,62}$/,
    'must be 1 to 63 letters, digits, _ . / or -, starting with a letter or digit',
  ),
);
export const TagValue = v.pipe(v.string(), v.trim(), v.maxLength(255, 'must be at most 255 characters'));
export const TagSchema = v.object({ key: TagKey, value: TagValue });
export const Tags = v.pipe(v.array(TagSchema), v.maxLength(50, 'at most 50 tags'));

export const TargetStatusSchema = v.picklist(['online', 'stale', 'offline'], 'must be one of online, stale, offline');

export const TargetSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  hostname: v.string(),
  os: v.string(),
  arch: v.string(),
  agent_version: v.pipe(v.string(), v.description('The version its agent last named (at registration, or since)')),
  agent_compatible: v.pipe(
    v.boolean(),
    v.description(
      "Whether that version is of this server's major version (GET /api/v1/server/info, agent_versions); false: its agent's calls are refused",
    ),
  ),
  agent_outdated: v.pipe(
    v.boolean(),
    v.description(
      'Whether that version is older than the agent build this server ships (GET /api/v1/server/info, agent_version); false when none is known',
    ),
  ),
  tags: v.array(v.object({ key: v.string(), value: v.string() })),
  status: TargetStatusSchema,
  last_heartbeat_at: v.nullable(v.string()),
  tenant_id: v.nullable(v.string()),
  environment_id: v.nullable(v.string()),
  created_at: v.string(),
});

/** A short free-text field the agent reports about its host. */
export const HostField = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
);

export const CommandIdParams = v.object({ id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

/** An enrollment token as lists show it (never the secret). */
export const EnrollmentTokenSchema = v.object({
  id: v.string(),
  tenant_id: v.nullable(v.string()),
  environment_id: v.nullable(v.string()),
  tags: v.array(v.object({ key: v.string(), value: v.string() })),
  uses: v.number(),
  max_uses: v.number(),
  expires_at: v.string(),
  description: v.pipe(v.nullable(v.string()), v.description('What the token is for, as its creator wrote it')),
  created_by: v.string(),
  created_by_name: v.pipe(
    v.string(),
    v.description('Who made it, as people read it: their display name (else username) when it was made'),
  ),
  created_at: v.string(),
});

export const MAX_CHUNK_CHARS = 65_536;

/** A batch of a command's output (POST .../output, and riding POST .../complete). */
export const OutputChunks = v.pipe(
  v.array(
    v.object({
      stream: v.picklist(['stdout', 'stderr'], 'must be stdout or stderr'),
      data: v.pipe(v.string(), v.maxLength(MAX_CHUNK_CHARS, `must be at most ${MAX_CHUNK_CHARS} characters`)),
      seq: v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be at least 0')),
    }),
  ),
  v.minLength(1, 'send at least one chunk'),
  v.maxLength(MAX_OUTPUT_CHUNKS, `at most ${MAX_OUTPUT_CHUNKS} chunks per request`),
  v.check(
    (chunks) => outputBytes(chunks) <= MAX_OUTPUT_BYTES,
    `at most ${MAX_OUTPUT_BYTES} bytes of data per request, all chunks together`,
  ),
  v.check(
    (chunks) => outputLineCount(chunks) <= MAX_OUTPUT_LINES,
    `at most ${MAX_OUTPUT_LINES} lines per request, all chunks together`,
  ),
);
