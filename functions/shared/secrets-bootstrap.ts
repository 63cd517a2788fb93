// Imported first by every function entry (each handler serverless.yml names). In the cloud it reads the secrets
// the function's environment names (`<NAME>_PARAMETER`) from Parameter Store into its environment, before the
// entry's other modules run: the bundle is one ES module evaluated in order, and this top-level await holds the
// rest until it is done (configuration, the cipher and the origin check read the environment lazily besides).
// Locally and in tests (STAGE local or unset) it reads nothing. A failure fails the cold start; Lambda retries it.
import { loadSecrets } from '../../infra/secrets.js';

await loadSecrets();
