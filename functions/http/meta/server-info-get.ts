// handler -> the build's version. No dependencies, no I/O.
import * as v from 'valibot';
import pkg from '../../../package.json' with { type: 'json' };
import { http } from '../../shared/http.js';

export const API_VERSION = '1.0.0';

const ServerInfo = v.object({ server_version: v.string(), api_version: v.string(), service: v.string() });

export const handler = http(
  {
    operationId: 'server_info',
    summary: 'Server and API versions',
    tags: ['meta'],
    permission: 'public',
    responses: { 200: { description: 'Versions', schema: ServerInfo } },
  },
  async () => ({
    statusCode: 200,
    body: { server_version: pkg.version, api_version: API_VERSION, service: pkg.name } satisfies v.InferOutput<
      typeof ServerInfo
    >,
  }),
);
