// Runs in every test worker before its file: end-to-end stacks with a name prefix of their own use the run's DynamoDB
// Local (started once by global-setup.ts, already warm) instead of starting a JVM each (local/stack.ts,
// dynamoEndpoint); stacks that ask for their own ports or data folder (restarts, crashes) still get their own.
import { inject } from 'vitest';

process.env['DEPLOYER_DYNAMODB_ENDPOINT'] ??= inject('dynamoEndpoint');

// Stacks run without their table's DynamoDB stream unless a file asks for it (tableStreams: true: the console's and
// the viewer channel's files, whose lists are pushed from the stream). Every stream read of the shared DynamoDB Local
// gets slower with the stream records of all its tables, and with every stack's stream on the suite ran ~50 % slower
// (docs/decisions.md, "Resource lists pushed from the table's stream").
process.env['LOCAL_TABLE_STREAMS'] ??= 'off';
