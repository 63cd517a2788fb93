// A whole stack with the two local agents, on a data directory the caller owns, as a process of its own (for
// tests/e2e/crash.test.ts: the test SIGKILLs its process group and starts it again on the same data).
// Usage: tsx tests/support/crash-stack.ts <dir> <port> <dynamoPort> <sqsPort> <namePrefix>
// Prints `READY <baseUrl>` once the agents run. DynamoDB Local keeps its files in <dir>/dynamodb, the keyring in
// <dir>/secrets, the agents their state in <dir>/agents. The sweep runs every second. SIGTERM stops it in order.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startLocalAgents } from '../../local/agents.js';
import { startStack } from '../../local/stack.js';

const [dir, port, dynamoPort, sqsPort, namePrefix] = process.argv.slice(2);
if (dir === undefined || namePrefix === undefined)
  throw new Error('usage: crash-stack.ts <dir> <port> <dynamoPort> <sqsPort> <namePrefix>');
await mkdir(join(dir, 'secrets'), { recursive: true });
const stack = await startStack({
  port: Number(port),
  dynamoPort: Number(dynamoPort),
  sqsPort: Number(sqsPort),
  dataDir: join(dir, 'dynamodb'),
  secretsDir: join(dir, 'secrets'),
  namePrefix,
  bootstrapAdmin: { email: 'admin@example.com', password: 'admin-password' },
  env: { SWEEP_INTERVAL_MS: '1000' },
});
const agents = await startLocalAgents(stack, join(dir, 'agents'), (line) => process.stdout.write(`agent: ${line}\n`));
process.stdout.write(`READY ${stack.baseUrl}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack.stop();
    process.exit(0);
  })();
});
