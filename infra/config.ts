// The environment, parsed once at cold start: fails fast naming every missing or malformed variable.
import * as v from 'valibot';

const NonEmpty = v.pipe(v.string(), v.trim(), v.minLength(1));

const Env = v.object({
  STAGE: v.optional(NonEmpty, 'local'),
  AWS_REGION: v.optional(NonEmpty, 'us-east-1'),
  TABLE_NAME: NonEmpty,
  DISPATCH_QUEUE_URL: v.pipe(NonEmpty, v.url('must be a queue URL')),
  /** Letters used to encode short ids; shuffle it per installation so short ids do not reveal counts. */
  SQIDS_ALPHABET: v.optional(
    v.pipe(NonEmpty, v.regex(/^[a-zA-Z0-9]{8,}$/, 'must be at least 8 distinct ASCII letters or digits')),
    'k3G7QAe51FCsPW92uEOyq4Bg6Sp8YzVTmnU0liwDdHXLajZrfxNhobJIRcMvKt',
  ),
  SHORT_ID_MIN_LENGTH: v.optional(v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(0), v.maxValue(32)), '6'),
});

export type Config = Readonly<v.InferOutput<typeof Env>>;

export class ConfigurationError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigurationError';
  }
}

export const parseConfig = (env: Readonly<Record<string, string | undefined>>): Config => {
  const result = v.safeParse(Env, env);
  if (!result.success) {
    throw new ConfigurationError(
      result.issues.map((issue) => {
        const name = v.getDotPath(issue) ?? '?';
        return issue.input === undefined ? `${name} is missing` : `${name} ${issue.message}`;
      }),
    );
  }
  return Object.freeze(result.output);
};

let cached: Config | undefined;

/** The process configuration; parsed on first use, then the same frozen object. */
export const config = (): Config => (cached ??= parseConfig(process.env));
