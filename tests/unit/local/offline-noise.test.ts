// What `npm start` hides of serverless-offline's own output: its per-request chatter and the WebSocket server's
// `received connection` for every agent that opens the agent socket; anything else (a warning, an error) shows.
import { describe, expect, it } from 'vitest';
import { isOfflineNoise } from '../../../local/offline.js';

describe('serverless-offline output shown by npm start', () => {
  it.each([
    ['received connection', true],
    ['  received connection', true],
    ['', true],
    ['GET /api/v1/health (λ: health)', true],
    ['(λ: health) RequestId: 1a2b Duration: 3.1 ms', true],
    ['received connection from 10.0.0.1', false],
    ['Offline [websocket] listening on ws://127.0.0.1:3001', false],
    ['✖ Unhandled exception in handler', false],
  ])('%j is hidden: %s', (line, hidden) => {
    expect(isOfflineNoise(line)).toBe(hidden);
  });
});
