// The first gate: 500 CONFIGURATION_ERROR while the cold start's configuration is incomplete.
import { configurationError, ShellAnswer } from './answers.js';
import type { Middleware } from './request-state.js';

/** 500 CONFIGURATION_ERROR naming what is missing, while the cold start's configuration is incomplete (`check` answers the gaps). */
export const startupGate = (check: () => readonly string[]): Middleware => ({
  before: function refuseIncompleteConfiguration() {
    const problems = check();
    if (problems.length > 0) throw new ShellAnswer(configurationError(problems));
  },
});
