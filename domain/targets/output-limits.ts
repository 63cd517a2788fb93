// How much output one agent request may carry, and what counts as a line (one `log` event of the deployment's
// stream per line). The agent (agent/output.ts) keeps to the same numbers and splits its batches.

/** Chunks per output request. */
export const MAX_OUTPUT_CHUNKS = 100;
/** UTF-8 bytes of `data`, all chunks of one request together (1 MiB). */
export const MAX_OUTPUT_BYTES = 1024 * 1024;
/** Lines, all chunks of one request together. */
export const MAX_OUTPUT_LINES = 5000;

/** The lines of a chunk's data: a final line break ends the last line rather than starting an empty one. */
export const outputLines = (data: string): string[] => data.replace(/\r?\n$/, '').split(/\r?\n/);

const encoder = new TextEncoder();

export const outputBytes = (chunks: readonly { readonly data: string }[]): number =>
  chunks.reduce((sum, c) => sum + encoder.encode(c.data).length, 0);

export const outputLineCount = (chunks: readonly { readonly data: string }[]): number =>
  chunks.reduce((sum, c) => sum + outputLines(c.data).length, 0);
