// Runs in every test worker before its file: end-to-end stacks with a name prefix of their own use the run's DynamoDB
// Local (started once by global-setup.ts, already warm) instead of starting a JVM each (local/stack.ts,
// dynamoEndpoint); stacks that ask for their own ports or data folder (restarts, crashes) still get their own.
import { inject } from 'vitest';

process.env['DEPLOYER_DYNAMODB_ENDPOINT'] ??= inject('dynamoEndpoint');
