// How tests/e2e/readme.test.ts reads README.md: which blocks run, with which marker, and which HTTP errors each
// paragraph announces. A marker the test does not know fails instead of being ignored.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../../local/service-definition.js';
import { announcedErrors, readmeBlocks } from '../../support/readme-blocks.js';

const fence = '```';

describe('readmeBlocks', () => {
  it('finds sh blocks and GitHub Actions steps in order, with the marker right before each, and nothing else', () => {
    const readme = [
      '# Top',
      `${fence}sh`,
      'echo one',
      fence,
      '## Skipped',
      '<!-- readme-test: skip: needs Docker -->',
      `${fence}sh`,
      'docker compose up',
      fence,
      '<!-- readme-test: stop after 5 s, expecting "data: ", "\\"a\\":1" -->',
      `${fence}sh`,
      'curl -N x',
      fence,
      `${fence}js`,
      'console.log(1)',
      fence,
      `${fence}yaml`,
      '- name: Deploy',
      '  env: { URL: "${{ vars.URL }}" }',
      '  run: |',
      '    echo "$URL"',
      fence,
    ].join('\n');
    const blocks = readmeBlocks(readme);
    expect(blocks).toEqual([
      { kind: 'sh', line: 3, section: 'Top', marker: { kind: 'run', expecting: [] }, text: 'echo one' },
      {
        kind: 'sh',
        line: 8,
        section: 'Skipped',
        marker: { kind: 'skip', reason: 'needs Docker' },
        text: 'docker compose up',
      },
      {
        kind: 'sh',
        line: 12,
        section: 'Skipped',
        marker: { kind: 'stop', afterSeconds: 5, expecting: ['data: ', '"a":1'] },
        text: 'curl -N x',
      },
      {
        kind: 'actions',
        line: 18,
        section: 'Skipped',
        marker: { kind: 'run', expecting: [] },
        name: 'Deploy',
        env: { URL: '${{ vars.URL }}' },
        run: 'echo "$URL"\n',
      },
    ]);
  });

  it('refuses a marker it does not know', () => {
    expect(() => readmeBlocks(`<!-- readme-test: maybe later -->\n${fence}sh\necho\n${fence}\n`)).toThrow(
      /maybe later/,
    );
  });

  it('reads the README itself: every marker known, skips few and each with its reason', () => {
    const blocks = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const skipped = blocks.filter((b) => b.marker.kind === 'skip');
    expect(blocks.length - skipped.length).toBeGreaterThan(skipped.length);
    expect(blocks.filter((b) => b.kind === 'actions')).toHaveLength(2);
  });
});

describe('announcedErrors', () => {
  it('allows, for each line, the 4xx and 5xx statuses named in a comment of its paragraph (blank lines: none)', () => {
    const text = [
      'curl a        # 404 {"error":...}',
      'curl b',
      '',
      '# both answer 409 CONFLICT',
      'curl c -d \'{"n":500}\'',
      '',
      'curl d        # 200',
    ].join('\n');
    expect(Object.fromEntries(announcedErrors(text))).toEqual({
      1: [404],
      2: [404],
      4: [409],
      5: [409],
      7: [],
    });
  });
});
