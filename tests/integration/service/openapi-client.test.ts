// A client generated from the OpenAPI document by a common generator type-checks against a few calls: the types
// come from openapi-typescript (the document built in process, as the service serves it), the calls
// (tests/openapi-client/calls.ts) use openapi-fetch, and the TypeScript compiler checks them.
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { currentDocument, writeApiTypes } from '../../openapi-client/generate.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const folders: string[] = [];

afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

/** Generates the types of `document` next to a copy of calls.ts (inside the project, so its node_modules resolve); the compiler's errors. */
const typeCheckCalls = async (document: Record<string, unknown>): Promise<string[]> => {
  await mkdir(join(root, '.local'), { recursive: true });
  const folder = await mkdtemp(join(root, '.local', 'openapi-client-'));
  folders.push(folder);
  await writeApiTypes(join(folder, 'generated', 'api.d.ts'), document);
  await mkdir(join(folder, 'openapi-client'));
  const calls = join(folder, 'openapi-client', 'calls.ts');
  await copyFile(join(root, 'tests', 'openapi-client', 'calls.ts'), calls);
  const program = ts.createProgram([calls], {
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) => `${d.file?.fileName.slice(folder.length) ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
};

// Generating and compiling takes seconds; more on a loaded 2-core machine.
describe('a client generated from the OpenAPI document', { timeout: 120_000 }, () => {
  it('type-checks typed calls: login, the deployment list, a create body, the queue and the log history', async () => {
    // Act
    const errors = await typeCheckCalls(currentDocument());
    // Assess
    expect(errors).toEqual([]);
  });

  it('fails to type-check when the document stops describing an answer the calls read', async () => {
    // Prepare: the list answer without its schema, and the create body's variables without their type
    const broken = structuredClone(currentDocument()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    delete broken.paths['/api/v1/deployments'].get.responses['200'].content;
    broken.paths['/api/v1/deployments'].post.requestBody.content['application/json'].schema.properties.variables = {
      type: 'object',
      additionalProperties: { type: 'string' },
    };
    // Act
    const errors = await typeCheckCalls(broken);
    // Assess
    expect(errors.some((e) => e.includes('calls.ts') && /meta|status_counts|data/.test(e))).toBe(true);
    expect(errors.some((e) => e.includes('calls.ts') && /number|boolean/.test(e))).toBe(true);
  });
});
