// The process side of the command line: argv, the environment, stdin/stdout/stderr and the exit code.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { run } from './cli.js';
import type { Io } from './command.js';
import { EXIT } from './errors.js';

let lines: AsyncIterator<string> | undefined;
const readLine = async (): Promise<string | undefined> => {
  lines ??= createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();
  const next = await lines.next();
  return next.done ? undefined : next.value;
};

/** Reads a line on the terminal without echoing it. */
const readHidden = (question: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    let value = '';
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') return done();
        if (char === '\u0003') return done(Object.assign(new Error('interrupted'), { exitCode: 130 }));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.on('data', onData);
  });

const io: Io = {
  env: process.env,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stdoutTty: process.stdout.isTTY === true,
  stderrTty: process.stderr.isTTY === true,
  prompt: async (question, hidden) => {
    if (!process.stdin.isTTY) return readLine();
    if (hidden) return readHidden(question);
    process.stderr.write(question);
    return readLine();
  },
  newId: randomUUID,
};

// Wait for stdout to drain before exiting (a pipe may still hold the JSON document).
const exit = (code: number) => {
  process.exitCode = code;
  process.stdout.write('', () => process.exit(code));
};

run(process.argv.slice(2), io).then(exit, (error: unknown) => {
  if ((error as { exitCode?: unknown }).exitCode === 130) return exit(130); // Ctrl-C at a hidden prompt
  process.stderr.write(
    `deployer: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  exit(EXIT.unreachable);
});
