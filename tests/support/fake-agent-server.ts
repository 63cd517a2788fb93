// A stand-in for the service's agent endpoints (decisions.md section 6, the protocol agent/ codes against), for
// testing the agent. Its state lives in a FakeAgentBackend that survives a restart of the HTTP listener, so a
// test can take the "server" away and bring it back on the same port. It is strict where the real server is:
// output seqs must arrive contiguous, output after completion is refused, tokens are checked per target.
// The push channel (issue #12) as the server speaks it: GET /api/v1/agent/channel, a WebSocket at /socket that
// checks the agent token at the handshake, `wake` pushed whenever a target's inbox gets something, `replaced` to
// the older of two connections of one target, `revoked` when a target is deleted.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket as WsSocket } from 'ws';
import type {
  AgentCommand,
  ChannelResponse,
  CompleteRequest,
  OutputChunk,
  RegisterRequest,
} from '../../protocol/messages.js';

export type HeartbeatVia = 'http' | 'socket' | 'channel';

export interface FakeTarget {
  readonly id: string;
  token: string;
  readonly registration: RegisterRequest;
}

export interface FakeCommandState {
  readonly command: AgentCommand;
  readonly targetId: string;
  status: 'queued' | 'delivered' | 'completed';
  deliveries: number;
  cancelRequested: boolean;
  readonly chunks: OutputChunk[];
  /** Every chunk as it arrived, duplicates included. */
  readonly received: OutputChunk[];
  completion: CompleteRequest | undefined;
  completeCalls: number;
  /** How many chunks the server held when the completion arrived. */
  chunksAtCompletion: number | undefined;
  /** Protocol mistakes the agent made with this command (gaps in seq, ...). */
  readonly violations: string[];
}

type Failure = { readonly status: number; readonly retryAfter?: string; readonly path?: RegExp };

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const error = (res: ServerResponse, status: number, code: string, message: string) =>
  json(res, status, { error: { code, message } });

const readBody = (req: IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => (text += part));
    req.on('end', () => {
      try {
        resolve(text === '' ? undefined : JSON.parse(text));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });

export class FakeAgentBackend {
  readonly enrollmentTokens = new Set<string>(['det_test-enrollment']);
  /** The tags a target gets, as the real server gives it its enrollment token's (the agent's own are ignored). */
  tokenTags: { key: string; value: string }[] = [{ key: 'env', value: 'test' }];
  readonly targets = new Map<string, FakeTarget>();
  readonly commands = new Map<string, FakeCommandState>();
  /** Every heartbeat: POST /heartbeat (http), a socket frame (socket), or GET /agent/channel (channel). */
  readonly heartbeats: { targetId: string; running: string[]; at: number; via: HeartbeatVia }[] = [];
  /** Every socket the server accepted, and how each ended (code as the server saw it). */
  readonly connections: { targetId: string; at: number; closedWith?: number }[] = [];
  /** Every frame an agent sent, parsed. */
  readonly frames: { targetId: string; frame: unknown; at: number }[] = [];
  /** Every goodbye (POST /heartbeat with `stopping: true`): an agent stopping cleanly; not counted as a heartbeat. */
  readonly goodbyes: { targetId: string; at: number }[] = [];
  channelCalls = 0;
  /** Overrides fields of the GET /agent/channel answer (socket_url: null offers no socket). */
  channelAnswer: Partial<ChannelResponse> = {};
  /** false: the test pushes wakes itself (enqueue, redeliver and cancel do not). */
  autoWake = true;
  /** Handshakes answered 403, as a proxy that refuses the upgrade would. */
  upgradesRefused = false;
  upgradesRefusedCount = 0;
  private readonly sockets = new Map<string, WsSocket>();
  readonly polls: { targetId: string; max: number; wait: number; at: number }[] = [];
  /** Every output request as it arrived: [command id, chunks]. */
  readonly outputRequests: { id: string; chunks: OutputChunk[]; at: number }[] = [];
  registerCalls = 0;
  private readonly inbox = new Map<string, string[]>();
  private readonly cancels = new Map<string, Set<string>>();
  private readonly failures: Failure[] = [];
  private waiters = new Set<() => void>();

  /** The next `count` requests (matching `path`, if given) answer `status` instead. */
  failNext(count: number, status: number, options: { retryAfter?: string; path?: RegExp } = {}): void {
    for (let i = 0; i < count; i++) this.failures.push({ status, ...options });
  }

  clearFailures(): void {
    this.failures.length = 0;
  }

  /** Forgets a target, as a server whose target was deleted (its token answers 401 from now on). */
  deleteTarget(id: string): void {
    this.targets.delete(id);
  }

  /** Deletes a target as the real server does: `revoked` on its socket, which is then closed. */
  revoke(id: string): void {
    this.deleteTarget(id);
    this.send(id, { type: 'revoked' });
    this.closeSocket(id, 1008);
  }

  heartbeatCount(via: HeartbeatVia, targetId?: string): number {
    return this.heartbeats.filter((h) => h.via === via && (targetId === undefined || h.targetId === targetId)).length;
  }

  refuseUpgrades(refuse: boolean): void {
    this.upgradesRefused = refuse;
  }

  /** Whether a target has an open socket. */
  connected(targetId: string): boolean {
    return this.sockets.get(targetId)?.readyState === 1;
  }

  /** Sends a frame to the target's socket; false when it has none. */
  send(targetId: string, frame: unknown): boolean {
    const ws = this.sockets.get(targetId);
    if (ws === undefined || ws.readyState !== 1) return false;
    ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
    return true;
  }

  /** Closes the target's socket from the server side (1001: API Gateway's "Going away"). */
  closeSocket(targetId: string, code = 1001, reason = code === 1001 ? 'Going away' : ''): void {
    const ws = this.sockets.get(targetId);
    this.sockets.delete(targetId);
    ws?.close(code, reason);
  }

  /** Called by the listener for a socket whose token checked out; replaces the target's older socket. */
  attach(targetId: string, ws: WsSocket): void {
    const connection: { targetId: string; at: number; closedWith?: number } = { targetId, at: Date.now() };
    this.connections.push(connection);
    const older = this.sockets.get(targetId);
    this.sockets.set(targetId, ws);
    if (older !== undefined) {
      older.send(JSON.stringify({ type: 'replaced' }));
      older.close(4000, 'replaced');
    }
    ws.on('close', (code) => {
      connection.closedWith = code;
      if (this.sockets.get(targetId) === ws) this.sockets.delete(targetId);
    });
    ws.on('message', (data, isBinary) => {
      let frame: unknown;
      try {
        frame = JSON.parse(isBinary ? '' : (data as Buffer).toString('utf8'));
      } catch {
        ws.send(JSON.stringify({ type: 'error', error: { code: 'INVALID_BODY', message: 'not JSON' } }));
        return;
      }
      this.frames.push({ targetId, frame, at: Date.now() });
      const { action, running_command_ids } = frame as { action?: unknown; running_command_ids?: unknown };
      if (action === 'heartbeat' && Array.isArray(running_command_ids)) {
        this.heartbeats.push({ targetId, running: running_command_ids as string[], at: Date.now(), via: 'socket' });
        return;
      }
      ws.send(JSON.stringify({ type: 'error', error: { code: 'VALIDATION_ERROR', message: 'unknown action' } }));
    });
  }

  /** The target a handshake's Authorization header names, or undefined. */
  targetOfToken(header: string | undefined): FakeTarget | undefined {
    const token = header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length) : '';
    return [...this.targets.values()].find((t) => t.token === token);
  }

  /** Forgets a command, as a server that no longer knows it (its output and completion answer 404). */
  forget(id: string): void {
    this.commands.delete(id);
  }

  /** The only target, for tests with one agent. */
  get target(): FakeTarget {
    const [target, ...others] = [...this.targets.values()];
    if (target === undefined || others.length > 0) throw new Error(`expected one target, found ${this.targets.size}`);
    return target;
  }

  /** Puts a command into a target's inbox; returns its full shape. */
  enqueue(targetId: string, overrides: Partial<AgentCommand> = {}): AgentCommand {
    const command: AgentCommand = {
      id: `cmd-${randomUUID()}`,
      deployment_id: 'dep-1',
      step_id: 'step-1',
      attempt: 1,
      action: { id: 'act-1', slug: 'hello', version: '1.2.0' },
      script: 'echo hello',
      interpreter: 'sh',
      variables: {},
      secret_variables: [],
      timeout_seconds: null,
      created_at: new Date().toISOString(),
      ...overrides,
    };
    this.commands.set(command.id, {
      command,
      targetId,
      status: 'queued',
      deliveries: 0,
      cancelRequested: false,
      chunks: [],
      received: [],
      completion: undefined,
      completeCalls: 0,
      chunksAtCompletion: undefined,
      violations: [],
    });
    this.inboxOf(targetId).push(command.id);
    this.wake(this.autoWake ? targetId : undefined);
    return command;
  }

  /** Delivers a command again, as a server that lost track of the first delivery would. */
  redeliver(id: string): void {
    const state = this.command(id);
    this.inboxOf(state.targetId).push(id);
    this.wake(this.autoWake ? state.targetId : undefined);
  }

  /** A running command is announced in the next poll's `cancel` and in output answers. */
  cancel(id: string, { viaPoll = true } = {}): void {
    const state = this.command(id);
    state.cancelRequested = true;
    if (viaPoll) {
      const set = this.cancels.get(state.targetId) ?? new Set<string>();
      set.add(id);
      this.cancels.set(state.targetId, set);
    }
    this.wake(viaPoll && this.autoWake ? state.targetId : undefined);
  }

  command(id: string): FakeCommandState {
    const state = this.commands.get(id);
    if (state === undefined) throw new Error(`no command ${id}`);
    return state;
  }

  /** The output of a command as the server holds it, in seq order. */
  output(id: string, stream?: 'stdout' | 'stderr'): string {
    return this.command(id)
      .chunks.filter((c) => stream === undefined || c.stream === stream)
      .map((c) => c.data)
      .join('');
  }

  /** Wakes every long poll so it answers now (also used when the listener closes); pushes `wake` to `targetId`. */
  wake(targetId?: string): void {
    if (targetId !== undefined) this.send(targetId, { type: 'wake' });
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  private inboxOf(targetId: string): string[] {
    let inbox = this.inbox.get(targetId);
    if (inbox === undefined) this.inbox.set(targetId, (inbox = []));
    return inbox;
  }

  private targetOf(req: IncomingMessage): FakeTarget | undefined {
    return this.targetOfToken(req.headers.authorization);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const failure = this.failures.findIndex((f) => f.path === undefined || f.path.test(url.pathname));
    if (failure !== -1) {
      const [f] = this.failures.splice(failure, 1);
      await readBody(req).catch(() => undefined);
      res.writeHead(f!.status, {
        'content-type': 'application/json',
        ...(f!.retryAfter === undefined ? {} : { 'retry-after': f!.retryAfter }),
      });
      res.end(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'injected failure' } }));
      return;
    }
    let body: unknown;
    try {
      body = await readBody(req);
    } catch {
      return error(res, 400, 'INVALID_BODY', 'not JSON');
    }
    const path = url.pathname;
    if (req.method === 'POST' && path === '/api/v1/agent/register') return this.register(res, body as RegisterRequest);
    const target = this.targetOf(req);
    if (target === undefined) return error(res, 401, 'INVALID_TOKEN', 'The agent token is not valid');
    if (
      req.method === 'POST' &&
      path === '/api/v1/agent/heartbeat' &&
      (body as { stopping?: unknown }).stopping === true
    ) {
      this.goodbyes.push({ targetId: target.id, at: Date.now() });
      return json(res, 200, { server_time: new Date().toISOString() });
    }
    if (req.method === 'POST' && path === '/api/v1/agent/heartbeat') {
      this.heartbeats.push({
        targetId: target.id,
        running: (body as { running_command_ids: string[] }).running_command_ids,
        at: Date.now(),
        via: 'http',
      });
      return json(res, 200, { server_time: new Date().toISOString() });
    }
    if (req.method === 'GET' && path === '/api/v1/agent/channel') {
      this.channelCalls += 1;
      this.heartbeats.push({ targetId: target.id, running: [], at: Date.now(), via: 'channel' });
      const answer: ChannelResponse = {
        socket_url: `ws://${req.headers.host ?? '127.0.0.1'}/socket`,
        heartbeat_seconds: 15,
        idle_ping_seconds: 300,
        poll_wait_seconds: 20,
        ...this.channelAnswer,
      };
      return json(res, 200, answer);
    }
    if (req.method === 'GET' && path === '/api/v1/agent/commands') {
      return this.poll(
        req,
        res,
        target,
        Number(url.searchParams.get('wait') ?? '20'),
        Number(url.searchParams.get('max') ?? '10'),
      );
    }
    const match = /^\/api\/v1\/agent\/commands\/([^/]+)\/(output|complete)$/.exec(path);
    if (req.method === 'POST' && match !== null) {
      const state = this.commands.get(decodeURIComponent(match[1]!));
      if (state === undefined || state.targetId !== target.id) return error(res, 404, 'NOT_FOUND', 'no such command');
      return match[2] === 'output'
        ? this.appendOutput(res, state, body as { chunks: OutputChunk[] })
        : this.complete(res, state, body as CompleteRequest);
    }
    return error(res, 404, 'NOT_FOUND', `${req.method} ${path}`);
  }

  private register(res: ServerResponse, body: RegisterRequest) {
    this.registerCalls += 1;
    if (!this.enrollmentTokens.has(body?.enrollment_token))
      return error(res, 401, 'INVALID_CREDENTIALS', 'The enrollment token is unknown or expired');
    const target: FakeTarget = { id: `target-${randomUUID()}`, token: `dpa_${randomUUID()}`, registration: body };
    this.targets.set(target.id, target);
    return json(res, 201, { target_id: target.id, short_id: 'fake1', agent_token: target.token, tags: this.tokenTags });
  }

  private async poll(req: IncomingMessage, res: ServerResponse, target: FakeTarget, wait: number, max: number) {
    this.polls.push({ targetId: target.id, max, wait, at: Date.now() });
    const deadline = Date.now() + Math.min(wait, 20) * 1000;
    let closed = false;
    res.on('close', () => (closed = true));
    for (;;) {
      if (closed) return; // the agent went away: deliver nothing into a dead connection
      const inbox = this.inboxOf(target.id);
      const ids = inbox.splice(0, Math.max(0, max));
      const cancelSet = this.cancels.get(target.id) ?? new Set<string>();
      const cancel = [...cancelSet];
      cancelSet.clear();
      if (ids.length > 0 || cancel.length > 0) {
        const commands = ids.map((id) => {
          const state = this.command(id);
          state.deliveries += 1;
          if (state.status === 'queued') state.status = 'delivered';
          return state.command;
        });
        return json(res, 200, { commands, cancel });
      }
      const left = deadline - Date.now();
      if (left <= 0 || closed || !req.socket.writable) return json(res, 200, { commands: [], cancel: [] });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }

  private appendOutput(res: ServerResponse, state: FakeCommandState, body: { chunks: OutputChunk[] }) {
    const chunks = body?.chunks ?? [];
    this.outputRequests.push({ id: state.command.id, chunks, at: Date.now() });
    let accepted = 0;
    for (const chunk of chunks) {
      state.received.push(chunk);
      const expected = state.chunks.length;
      if (chunk.seq < expected) continue; // a retry: already stored
      if (state.status === 'completed')
        return error(res, 409, 'CONFLICT', 'The command is completed; it takes no more output.');
      if (chunk.seq > expected) {
        state.violations.push(`gap: got seq ${chunk.seq}, expected ${expected}`);
        return error(res, 400, 'VALIDATION_ERROR', `expected seq ${expected}`);
      }
      state.chunks.push(chunk);
      accepted += 1;
    }
    return json(res, 200, { accepted, cancel_requested: state.cancelRequested });
  }

  private complete(res: ServerResponse, state: FakeCommandState, body: CompleteRequest) {
    state.completeCalls += 1;
    if (state.status !== 'completed') {
      state.status = 'completed';
      state.completion = body;
      state.chunksAtCompletion = state.chunks.length;
    }
    return json(res, 200, { id: state.command.id, status: 'completed' });
  }
}

export interface FakeAgentServer {
  readonly backend: FakeAgentBackend;
  readonly url: string;
  readonly port: number;
  /** Stops listening and drops every open connection (agents see connection errors until it is back). */
  close(): Promise<void>;
}

export const startFakeAgentServer = async (backend = new FakeAgentBackend(), port = 0): Promise<FakeAgentServer> => {
  const server: Server = createServer((req, res) => {
    backend.handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) error(res, 500, 'INTERNAL_ERROR', String(e));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const sockets = new WebSocketServer({
    server,
    path: '/socket',
    verifyClient: (info, callback) => {
      if (backend.upgradesRefused) {
        backend.upgradesRefusedCount += 1;
        return callback(false, 403, 'Forbidden');
      }
      const target = backend.targetOfToken(info.req.headers.authorization);
      return target === undefined ? callback(false, 401, 'Unauthorized') : callback(true);
    },
  });
  sockets.on('connection', (ws, req) => {
    const target = backend.targetOfToken(req.headers.authorization);
    if (target === undefined) return ws.close(1008, 'unauthorized');
    backend.attach(target.id, ws);
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    backend,
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const ws of sockets.clients) ws.terminate();
      sockets.close();
      server.closeAllConnections();
      backend.wake();
      await closed;
    },
  };
};
