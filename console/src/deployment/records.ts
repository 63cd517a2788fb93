// What the deployment page shows: the deployment with its plan's steps, its command results with their analysis, and
// its log lines, as GET /deployments/{id}, /analysis and the /logs stream answer them.
import type { DeploymentRow } from '../deployments.js';

/** How the API shows a secret variable's value: the console never sees it. */
export const SECRET_MASK = '***';

export interface Step {
  readonly id: string;
  readonly target_id: string;
  readonly target_name: string;
  readonly action_name: string;
  readonly action_version: string;
  readonly state: string;
  readonly exit_code: number | null;
  readonly error_message: string | null;
  readonly duration_ms: number | null;
}

export interface Detail extends DeploymentRow {
  readonly analysis_enabled?: boolean;
  readonly config?: { variables: Record<string, string> };
  readonly error_message: string | null;
  readonly cancel_reason?: string;
  readonly plan: { steps: Step[]; warnings?: string[] } | null;
}

export interface CommandResult {
  readonly id: string;
  readonly target_name?: string;
  readonly action_name?: string;
  readonly status: string;
  readonly exit_code?: number;
  readonly stderr_tail?: string;
  readonly error_message?: string;
  readonly analysis?: { summary: string; likely_cause: string; remediation: string[]; confidence: number };
}

export interface Line {
  readonly seq: number;
  readonly text: string;
  readonly stream: string;
  readonly target: string;
}
