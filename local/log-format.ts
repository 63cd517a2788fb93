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

const SKIP = new Set(['level', 'message', 'timestamp', 'service', 'sampling_rate', 'xray_trace_id', 'cold_start', 'function_name', 'function_memory_size', 'function_arn', 'function_request_id']);

export const formatLogLine = (line: string): string => {
  if (!line.startsWith('{')) return line;
  let entry: Entry;
  try {
    entry = JSON.parse(line) as Entry;
  } catch {
    return line;
  }
  const time = entry.timestamp?.slice(11, 19) ?? '';
  if (entry.message === 'request' && entry.method !== undefined) {
    return `${time} ${entry.method} ${entry.path} -> ${entry.status} (${entry.duration_ms} ms)`;
  }
  const fields = Object.entries(entry)
    .filter(([key]) => !SKIP.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${time} ${entry.level ?? ''} ${entry.message ?? ''} ${fields}`.trim();
};
