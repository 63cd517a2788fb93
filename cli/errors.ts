// The exit codes a pipeline can rely on (deployer --help lists them), and the errors that carry them.

export const EXIT = {
  /** The command did what was asked; a deployment waited for succeeded. */
  ok: 0,
  /** The deployment failed or was rolled back. */
  failed: 1,
  /** Wrong usage: an unknown command or flag, a bad value, missing configuration. */
  usage: 2,
  /** The service refused the request (400, 401, 403, 404, 409, 422): its message and code on stderr. */
  refused: 3,
  /** The service could not be reached (network error, 5xx or 429 after the retries of reads). */
  unreachable: 4,
  /** The deployment was cancelled. */
  cancelled: 5,
  /** --timeout elapsed; the deployment keeps running. */
  timeout: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends the command with its exit code and a message on stderr. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
  }
}

/** Usage: names the flag or value at fault; the command's usage line follows it. */
export class UsageError extends CliError {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(EXIT.usage, message);
  }
}

/** The service answered with an error envelope (4xx). */
export class RefusedError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(EXIT.refused, message);
  }
}

export class UnreachableError extends CliError {
  constructor(message: string) {
    super(EXIT.unreachable, message);
  }
}

export class TimeoutError extends CliError {
  constructor(message: string) {
    super(EXIT.timeout, message);
  }
}

/** The exit code of a deployment's final state. */
export const exitCodeOfState = (state: string): ExitCode => {
  if (state === 'success') return EXIT.ok;
  if (state === 'cancelled') return EXIT.cancelled;
  return EXIT.failed;
};

/** What an HTTP error status means for the exit code: 4xx refused; 429 and 5xx unreachable (busy or down). */
export const exitCodeOfStatus = (status: number): ExitCode =>
  status === 429 || status >= 500 ? EXIT.unreachable : EXIT.refused;
