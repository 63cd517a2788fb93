// The credential chain of the cloud bundles: infra/esbuild-plugins.cjs puts this module in place of
// `@aws-sdk/credential-provider-node` (the SDK's default chain). In Lambda the function's role credentials are
// always in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), and the default chain
// tries the environment first, so it always ends there; the rest of the chain (SSO, profiles, web identity,
// container and instance metadata, with their nested STS/SSO clients) is about 100 KiB of every bundle that a
// cold start compiles for nothing. Locally the SDK is not bundled and keeps its whole chain.
import { fromEnv } from '@aws-sdk/credential-provider-env';

type FromEnvInit = Parameters<typeof fromEnv>[0];

/** The signature of the default chain's `defaultProvider`, answering from the environment only. */
export const defaultProvider = (init: FromEnvInit = {}): ReturnType<typeof fromEnv> => fromEnv(init);
