// The service's secrets (the data key ring, the CloudFront origin secret, the first admin's password), loaded at
// cold start. Locally (STAGE local or unset) they are plain environment variables, as `npm start` and the tests set
// them. In the cloud no function has a secret in its environment: a variable `<NAME>_PARAMETER` holds the name of an
// SSM Parameter Store SecureString, read (decrypted) once at cold start (infra/ssm-parameter.ts), then put in the
// process environment under `<NAME>`, where infra/config.ts and the rest read it as before. Each function's
// environment names only the parameters it needs, and its role may read only those (infra/iam.yml). docs/cloud.md
// says how to create them.
import { getSecureParameter } from './ssm-parameter.js';

export const SECRET_NAMES = ['ENCRYPTION_KEYS', 'EDGE_ORIGIN_SECRET', 'BOOTSTRAP_ADMIN_PASSWORD'] as const;
/**
 * Settings read the same way that are not secret: the public URL, which the stack writes to a String parameter
 * once its CloudFront distribution exists (infra/edge.yml, PublicBaseUrlParameter). An environment variable cannot
 * carry it: the functions' environment would then depend on the distribution, which depends on the streaming
 * function's URL, a cycle CloudFormation refuses (docs/cloud.md, "A custom domain").
 */
export const PARAMETER_SETTING_NAMES = ['PUBLIC_BASE_URL'] as const;
export type SecretName = (typeof SECRET_NAMES)[number] | (typeof PARAMETER_SETTING_NAMES)[number];
const LOADED: readonly SecretName[] = [...SECRET_NAMES, ...PARAMETER_SETTING_NAMES];

/** Secrets a deployment may leave out (nothing happens without them); the others fail the cold start when absent. */
const OPTIONAL: ReadonlySet<SecretName> = new Set(['BOOTSTRAP_ADMIN_PASSWORD']);

type Fetch = (parameterName: string) => Promise<string | undefined>;

const fromParameterStore: Fetch = (name) => getSecureParameter(name);

/**
 * Puts each secret whose `<NAME>_PARAMETER` is set (and `<NAME>` is not) into `env`, read from Parameter Store.
 * Locally nothing is fetched. A required parameter that does not exist is an error naming the parameter (never a
 * value); an optional one is left unset.
 */
export const loadSecrets = async (
  env: Record<string, string | undefined> = process.env,
  fetch: Fetch = fromParameterStore,
): Promise<readonly SecretName[]> => {
  const stage = (env['STAGE'] ?? '').trim();
  if (stage === '' || stage === 'local') return [];
  const wanted = LOADED.filter((name) => !env[name] && (env[`${name}_PARAMETER`] ?? '').trim() !== '');
  const values = await Promise.all(wanted.map((name) => fetch(env[`${name}_PARAMETER`]!.trim())));
  const missing = wanted.filter((name, i) => values[i] === undefined && !OPTIONAL.has(name));
  if (missing.length > 0)
    throw new Error(
      `Secret parameters not found: ${missing.map((name) => `${name}_PARAMETER=${env[`${name}_PARAMETER`]}`).join(', ')}`,
    );
  wanted.forEach((name, i) => {
    if (values[i] !== undefined) env[name] = values[i];
  });
  return wanted.filter((_, i) => values[i] !== undefined);
};
