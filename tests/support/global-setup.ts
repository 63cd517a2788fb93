// Starts the emulators once for the whole run; integration tests reach them through inject().
import type { TestProject } from 'vitest/node';
import { startDynamo, startSqs, type Emulator } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    sqsEndpoint: string;
  }
}

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true'; // this process runs SDK clients too

let emulators: Emulator[] = [];

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [dynamo, sqs] = await Promise.all([startDynamo({ port: await freePort() }), startSqs({ port: 0 })]);
  emulators = [dynamo, sqs];
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', sqs.endpoint);
  return async () => {
    await Promise.all(emulators.map((e) => e.stop()));
  };
}
