// This build's version: the API and the orchestration engine are one deployment of one package, so both are this
// version by construction (GET /api/v1/server/info reports it as server_version and engine_version).
import pkg from '../../package.json' with { type: 'json' };

export const SERVER_VERSION: string = pkg.version;
