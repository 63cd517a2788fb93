// How `npm start` shows the handlers' JSON logs to a person: one short line per request, other entries as
// `LEVEL message` with their fields. `--verbose` shows the raw JSON instead.

interface Entry {
  level?: string;
  message?: string;
  timestamp?: string;
  method?: string;
  path?: string;
  status?: number;
  duration_ms?: number;
  request_id?: string;
  [key: string]: unknown;
}

const SKIP = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'cold_start',
  'function_name',
  'function_memory_size',
  'function_arn',
  'function_request_id',
]);

/** The agents' routine traffic (heartbeats every 15 s, long polls every 20 s) when it succeeds: hidden. */
const ROUTINE = /^(POST \/api\/v1\/agent\/heartbeat|GET \/api\/v1\/agent\/commands)(\?|$)/;

/** The line to show, or undefined for one not worth a person's attention (`--verbose` shows everything). */
export const formatLogLine = (line: string): string | undefined => {
  if (!line.startsWith('{')) return line;
  let entry: Entry;
  try {
    entry = JSON.parse(line) as Entry;
  } catch {
    return line;
  }
  const time = entry.timestamp?.slice(11, 19) ?? '';
  if (entry.message === 'request' && entry.method !== undefined) {
    if (ROUTINE.test(`${entry.method} ${entry.path}`) && (entry.status ?? 500) < 400) return undefined;
    return `${time} ${entry.method} ${entry.path} -> ${entry.status} (${entry.duration_ms} ms)`;
  }
  const fields = Object.entries(entry)
    .filter(([key]) => !SKIP.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${time} ${entry.level ?? ''} ${entry.message ?? ''} ${fields}`.trim();
};
