// Who this agent is: the enrollment kept in the state folder when it belongs to this server, else a new one made
// with the enrollment token (POST /api/v1/agent/register). When the server later refuses the agent token (the target
// was deleted, the server data reset), the agent enrolls again once if it still has an enrollment token.
import { arch, hostname, platform, release } from 'node:os';
import { HttpError, UnavailableError, type AgentClient } from './client.js';
import { AGENT_VERSION_INCOMPATIBLE } from '../protocol/headers.js';
import { DEFAULTS, positive, type AgentOptions } from './settings.js';
import { normalizeServer, readState, writeState, type AgentState } from './state.js';
import { AGENT_VERSION } from './version.js';

export interface EnrollmentDeps {
  readonly client: AgentClient;
  readonly options: Pick<AgentOptions, 'name' | 'tags' | 'enrollToken' | 'enrollOnly' | 'connectTimeoutSeconds'>;
  readonly server: string;
  readonly stateDir: string;
  readonly log: (message: string) => void;
  /** The agent cannot go on: it says why and stops with exit code 1. */
  readonly fatal: (message: string) => void;
  /** The agent enrolled again (a new target and token). */
  readonly onReenrolled: () => void;
}

/** The agent token is no longer valid: the error an authenticated call ends with when no re-enrollment saves it. */
const invalidToken = () => new HttpError(401, 'INVALID_TOKEN', 'The agent token is no longer valid');

export class Enrollment {
  /** The target this agent acts for (a new one after it had to enroll again). */
  targetId = '';
  private reenrolling: Promise<void> | undefined;
  private reenrolled = false;

  constructor(private readonly deps: EnrollmentDeps) {}

  private get enrollToken(): string | undefined {
    const token = this.deps.options.enrollToken;
    return token === undefined || token === '' ? undefined : token;
  }

  /** Uses the state folder's enrollment when it is this server's, else enrolls; rejects with what to do otherwise. */
  async establish(): Promise<void> {
    const { deps } = this;
    const { server, stateDir } = deps;
    const state = await readState(stateDir);
    if (state !== undefined && normalizeServer(state.server) === server) {
      this.use(state);
      deps.log(
        deps.options.enrollOnly === true
          ? `already enrolled with ${server} as target ${state.target_id} (state in ${stateDir}); keeping this identity${this.enrollToken === undefined ? '' : ', the enrollment token was not used'}`
          : `using the enrollment in ${stateDir} (target ${state.target_id})`,
      );
    } else if (this.enrollToken !== undefined) {
      if (state !== undefined)
        deps.log(`the state in ${stateDir} belongs to ${state.server}; enrolling with ${server}`);
      await this.enroll();
    } else if (state !== undefined) {
      throw new Error(
        `The state in ${stateDir} belongs to the server ${state.server}, not ${server}; pass --enroll TOKEN to enroll with ${server}`,
      );
    } else {
      throw new Error(`This agent is not enrolled yet (no state in ${stateDir}); start it once with --enroll TOKEN`);
    }
  }

  /** A 401 on an authenticated call: enroll again once when we can, else give up. */
  unauthorized(): Promise<void> {
    const { deps } = this;
    if (this.reenrolling !== undefined) return this.reenrolling;
    if (this.reenrolled || this.enrollToken === undefined) {
      deps.fatal(
        this.reenrolled
          ? 'The server refused the new agent token as well; stopping.'
          : 'The server refused the agent token (the target was deleted or the server data was reset). Start the agent again with --enroll TOKEN.',
      );
      return Promise.reject(invalidToken());
    }
    deps.log('the server refused the agent token (target deleted or server data reset); enrolling again');
    this.reenrolling = this.enroll()
      .then(() => {
        this.reenrolled = true;
        deps.onReenrolled();
      })
      .catch((error: unknown) => {
        deps.fatal(`Enrolling again failed: ${(error as Error).message}`);
        throw invalidToken();
      })
      .finally(() => {
        this.reenrolling = undefined;
      });
    return this.reenrolling;
  }

  private use(state: AgentState): void {
    this.targetId = state.target_id;
    this.deps.client.setToken(state.agent_token);
  }

  private async enroll(): Promise<void> {
    const { deps } = this;
    const { server, options } = deps;
    const tags = options.tags ?? [];
    let answer;
    try {
      answer = await deps.client.register(
        {
          enrollment_token: options.enrollToken ?? '',
          name: options.name,
          hostname: hostname(),
          os: `${platform()} ${release()}`,
          arch: arch(),
          agent_version: AGENT_VERSION,
          tags,
        },
        positive('connectTimeoutSeconds', options.connectTimeoutSeconds, DEFAULTS.connectTimeoutSeconds, {
          zero: true,
        }) * 1000,
      );
    } catch (error) {
      throw enrollmentError(server, error);
    }
    if (typeof answer.target_id !== 'string' || typeof answer.agent_token !== 'string') {
      throw new Error(`Enrollment failed: ${server} answered without target_id and agent_token`);
    }
    const state: AgentState = {
      server,
      target_id: answer.target_id,
      agent_token: answer.agent_token,
      name: options.name,
      enrolled_at: new Date().toISOString(),
    };
    await writeState(deps.stateDir, state);
    this.use(state);
    // What the server applied: the enrollment token's tags, whatever --tag said.
    const applied = Array.isArray(answer.tags)
      ? answer.tags.map((t) => `${t.key}=${t.value}`).join(', ') || 'none'
      : 'not reported by the server';
    deps.log(
      `enrolled with ${server} as target ${state.target_id}${answer.short_id === undefined ? '' : ` (${answer.short_id})`}, tags ${applied}`,
    );
    if (tags.length > 0)
      deps.log('--tag is not applied by the server: a target gets its enrollment token’s tags (set them on the token)');
  }
}

/** Why a registration failed, as the person starting the agent reads it. */
const enrollmentError = (server: string, error: unknown): unknown => {
  if (error instanceof HttpError && error.code === AGENT_VERSION_INCOMPATIBLE)
    return new Error(`Enrollment refused by ${server}: ${error.message}`);
  if (error instanceof HttpError && (error.status === 401 || error.status === 403))
    return new Error(`Enrollment refused by ${server}: the enrollment token is unknown or expired (${error.message})`);
  if (error instanceof HttpError)
    return new Error(`Enrollment failed: ${server} answered ${error.status} ${error.code}: ${error.message}`);
  if (error instanceof UnavailableError) return new Error(`Could not reach ${server} to enroll: ${error.message}`);
  return error;
};
