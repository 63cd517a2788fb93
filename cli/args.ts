// The argument parser: `--flag value`, `--flag=value`, boolean flags, repeatable flags, positionals and `--`.
// Every mistake is a UsageError naming the flag or value at fault.
import { UsageError } from './errors.js';

export type FlagKind = 'string' | 'boolean' | 'list';

export interface FlagSpec {
  readonly kind: FlagKind;
  /** The value's name in help (`--target ID|NAME`). */
  readonly value?: string;
  readonly help: string;
  /** A one-letter alias (`-h`, `-o`). */
  readonly short?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

export interface Parsed {
  readonly flags: Readonly<Record<string, string | boolean | readonly string[] | undefined>>;
  readonly positionals: readonly string[];
}

/** Parses `argv` against `specs`; `command` names the command in errors. */
export const parseArgs = (argv: readonly string[], specs: FlagSpecs, command?: string): Parsed => {
  const flags: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  const byShort = new Map(Object.entries(specs).flatMap(([name, s]) => (s.short ? [[s.short, name] as const] : [])));
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else if (/^-[A-Za-z]$/.test(arg)) {
      const long = byShort.get(arg.slice(1));
      if (long === undefined) throw new UsageError(`unknown flag ${arg}`, command);
      name = long;
    } else {
      positionals.push(arg);
      continue;
    }
    const spec = specs[name];
    if (spec === undefined) throw new UsageError(`unknown flag --${name}`, command);
    if (spec.kind === 'boolean') {
      if (inline !== undefined && inline !== 'true' && inline !== 'false')
        throw new UsageError(`--${name} takes no value (got "${inline}")`, command);
      flags[name] = inline !== 'false';
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next.length > 1))
        throw new UsageError(`--${name} needs a value${spec.value ? ` (${spec.value})` : ''}`, command);
      value = next;
      i += 1;
    }
    if (spec.kind === 'list') flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
    else if (flags[name] !== undefined) throw new UsageError(`--${name} given twice`, command);
    else flags[name] = value;
  }
  return { flags, positionals };
};

export const stringFlag = (parsed: Parsed, name: string): string | undefined => {
  const value = parsed.flags[name];
  return typeof value === 'string' ? value : undefined;
};
export const boolFlag = (parsed: Parsed, name: string): boolean => parsed.flags[name] === true;
export const listFlag = (parsed: Parsed, name: string): readonly string[] => {
  const value = parsed.flags[name];
  return Array.isArray(value) ? value : [];
};

/** An integer flag within [min, max], or undefined when absent. */
export const intFlag = (parsed: Parsed, name: string, min: number, max: number, command?: string) => {
  const raw = stringFlag(parsed, name);
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw)) throw new UsageError(`--${name} must be an integer (got "${raw}")`, command);
  const value = Number(raw);
  if (value < min || value > max)
    throw new UsageError(`--${name} must be between ${min} and ${max} (got ${value})`, command);
  return value;
};

/** `KEY=VALUE` (the value may contain `=`; the key may not be empty). */
export const keyValue = (raw: string, flag: string, command?: string): { key: string; value: string } => {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new UsageError(`--${flag} must be KEY=VALUE (got "${raw}")`, command);
  return { key: raw.slice(0, eq), value: raw.slice(eq + 1) };
};

/** A duration: `90` or `90s`, `10m`, `2h`; milliseconds. */
export const parseDuration = (raw: string, flag: string, command?: string): number => {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (match === null)
    throw new UsageError(`--${flag} must be a duration such as 90s, 10m or 1h (got "${raw}")`, command);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(match[1]) * unit;
  if (ms <= 0) throw new UsageError(`--${flag} must be more than 0 (got "${raw}")`, command);
  return ms;
};

/** One of the allowed values. */
export const oneOf = <T extends string>(
  raw: string | undefined,
  allowed: readonly T[],
  flag: string,
  command?: string,
) => {
  if (raw === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(raw))
    throw new UsageError(`--${flag} must be one of ${allowed.join(', ')} (got "${raw}")`, command);
  return raw as T;
};
