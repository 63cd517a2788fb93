// The scripts a plan pins: each planned action version's script, rollback script, interpreter and timeout, so a
// later edit of the action never changes what a deployment runs; bounded so the deployment's item stays < 400 KB.
import { ValidationError } from '../../errors.js';
import type { StepScript } from '../types.js';
import type { PlannedAction } from './sources.js';

/** The most script text (UTF-8 bytes, every pinned script and rollback script) one plan holds: its item stays < 400 KB. */
export const PINNED_SCRIPTS_MAX_BYTES = 256 * 1024;

/** Each planned action version's script, rollback script, interpreter and timeout, pinned into the plan. */
export const pinnedScripts = (actions: readonly PlannedAction[], sourceField: string): Record<string, StepScript> => {
  const scripts: Record<string, StepScript> = {};
  let bytes = 0;
  for (const { version } of actions) {
    if (Object.hasOwn(scripts, version.id)) continue;
    scripts[version.id] = {
      script: version.script,
      interpreter: version.interpreter,
      rollbackScript: version.rollbackScript,
      timeoutSeconds: version.timeoutSeconds,
    };
    bytes += utf8Bytes(version.script) + utf8Bytes(version.rollbackScript ?? '');
  }
  if (bytes > PINNED_SCRIPTS_MAX_BYTES) {
    throw ValidationError.field(
      sourceField,
      `The plan's scripts add up to ${Math.ceil(bytes / 1024)} KiB; at most ${PINNED_SCRIPTS_MAX_BYTES / 1024} KiB are pinned into one deployment. Split it.`,
    );
  }
  return scripts;
};

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;
