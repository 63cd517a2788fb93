// How much output one agent request may carry, and what counts as a line (one `log` event of the deployment's
// stream per line). The service refuses a request over them; the agent (agent/output.ts) cuts its batches to fit.

/** Chunks per output request. */
export const MAX_OUTPUT_CHUNKS = 100;
/** UTF-8 bytes of `data`, all chunks of one request together (1 MiB). */
export const MAX_OUTPUT_BYTES = 1024 * 1024;
/** Lines, all chunks of one request together. */
export const MAX_OUTPUT_LINES = 5000;

/** The lines of a chunk's data: a final line break ends the last line rather than starting an empty one. */
export const outputLines = (data: string): string[] => data.replace(/\r?\n$/, '').split(/\r?\n/);

/** How many lines `outputLines` makes of `data`, counted without splitting it (the agent counts every chunk). */
export const lineCount = (data: string): number => {
  let breaks = 0;
  for (let i = data.indexOf('\n'); i !== -1; i = data.indexOf('\n', i + 1)) breaks += 1;
  return data.endsWith('\n') ? Math.max(1, breaks) : breaks + 1;
};

const encoder = new TextEncoder();

export const outputBytes = (chunks: readonly { readonly data: string }[]): number =>
  chunks.reduce((sum, c) => sum + encoder.encode(c.data).length, 0);

export const outputLineCount = (chunks: readonly { readonly data: string }[]): number =>
  chunks.reduce((sum, c) => sum + lineCount(c.data), 0);
