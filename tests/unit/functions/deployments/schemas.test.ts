// Every rule of api.md's "Create body" and "Redeploy body", through valibot and the shell's issue -> field mapping.
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../../domain/errors.js';
import { CreateDeploymentBody, RedeployBody } from '../../../../functions/http/deployments/schemas.js';
import { parseWith } from '../../../../functions/shared/validation.js';

const VALID = { action_id: 'abc123', target_tags: [{ key: 'role', value: 'web' }] };

/** The error code and each field with its own code, or 'ok'. */
const outcome = (schema: typeof CreateDeploymentBody | typeof RedeployBody, body: unknown) => {
  try {
    parseWith(schema, body, 'body');
    return 'ok';
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { code: error.code, fields: error.fields.map((f) => `${f.field}:${f.code}`) };
  }
};
const create = (body: unknown) => outcome(CreateDeploymentBody, body);
const redeploy = (body: unknown) => outcome(RedeployBody, body);
const invalid = (...fields: string[]) => ({
  code: 'VALIDATION_ERROR',
  fields: fields.map((f) => `${f}:VALIDATION_ERROR`),
});

describe('CreateDeploymentBody: the source', () => {
  it('accepts exactly one of solution_id, sequence_id, action_id (null counts as absent)', () => {
    expect(create(VALID)).toBe('ok');
    expect(create({ ...VALID, action_id: undefined, solution_id: 'sol1' })).toBe('ok');
    expect(create({ ...VALID, action_id: undefined, sequence_id: 'seq1', solution_id: null })).toBe('ok');
  });

  it('none: 400 VALIDATION_ERROR naming the three source fields', () => {
    expect(create({ target_ids: ['t1'] })).toEqual(invalid('solution_id', 'sequence_id', 'action_id'));
    expect(create({ target_ids: ['t1'], action_id: null })).toEqual(invalid('solution_id', 'sequence_id', 'action_id'));
  });

  it('two or three: 400 VALIDATION_ERROR naming the given ones', () => {
    expect(create({ ...VALID, sequence_id: 's' })).toEqual(invalid('sequence_id', 'action_id'));
    expect(create({ ...VALID, sequence_id: 's', solution_id: 'x' })).toEqual(
      invalid('solution_id', 'sequence_id', 'action_id'),
    );
  });

  it('ids are non-empty strings of at most 64 characters', () => {
    expect(create({ ...VALID, action_id: '' })).toEqual(invalid('action_id'));
    expect(create({ ...VALID, action_id: 'x'.repeat(65) })).toEqual(invalid('action_id'));
    expect(create({ ...VALID, action_id: 12 })).toEqual(invalid('action_id'));
  });

  it('version_requirement is an optional string', () => {
    expect(create({ ...VALID, version_requirement: '^1.2' })).toBe('ok');
    expect(create({ ...VALID, version_requirement: null })).toBe('ok');
    expect(create({ ...VALID, version_requirement: 1 })).toEqual(invalid('version_requirement'));
    expect(create({ ...VALID, version_requirement: 'x'.repeat(257) })).toEqual(invalid('version_requirement'));
  });
});

describe('CreateDeploymentBody: targets', () => {
  it('needs target_ids or target_tags, at least one target (empty arrays do not count)', () => {
    expect(create({ action_id: 'a', target_ids: ['t1'] })).toBe('ok');
    expect(create({ action_id: 'a', target_ids: [], target_tags: [{ key: 'k', value: 'v' }] })).toBe('ok');
    expect(create({ action_id: 'a' })).toEqual(invalid('target_ids', 'target_tags'));
    expect(create({ action_id: 'a', target_ids: [], target_tags: [] })).toEqual(invalid('target_ids', 'target_tags'));
  });

  it('checks each id and each tag', () => {
    expect(create({ action_id: 'a', target_ids: ['t1', ''] })).toEqual(invalid('target_ids.1'));
    expect(create({ action_id: 'a', target_ids: 't1' })).toEqual(invalid('target_ids'));
    expect(create({ action_id: 'a', target_tags: [{ key: '', value: 'v' }] })).toEqual(invalid('target_tags.0.key'));
    expect(create({ action_id: 'a', target_tags: [{ key: 'k' }] })).toEqual({
      code: 'MISSING_FIELD',
      fields: ['target_tags.0.value:MISSING_FIELD'],
    });
    expect(
      create({ action_id: 'a', target_tags: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: 'v' })) }),
    ).toEqual(invalid('target_tags'));
  });

  it('target_tags_match_all is a boolean', () => {
    expect(create({ ...VALID, target_tags_match_all: true })).toBe('ok');
    expect(create({ ...VALID, target_tags_match_all: 'yes' })).toEqual(invalid('target_tags_match_all'));
  });
});

describe('CreateDeploymentBody: settings and their ranges', () => {
  it('target_mode: sequential, parallel or {rolling: {batch_size >= 1}}', () => {
    for (const mode of ['sequential', 'parallel', { rolling: { batch_size: 1 } }, { rolling: { batch_size: 25 } }])
      expect(create({ ...VALID, target_mode: mode })).toBe('ok');
    expect(create({ ...VALID, target_mode: 'random' })).toEqual(invalid('target_mode'));
    expect(create({ ...VALID, target_mode: { rolling: {} } })).toEqual(invalid('target_mode'));
    expect(create({ ...VALID, target_mode: { rolling: { batch_size: 0 } } })).toEqual(
      invalid('target_mode.rolling.batch_size'),
    );
    expect(create({ ...VALID, target_mode: { rolling: { batch_size: 1.5 } } })).toEqual(
      invalid('target_mode.rolling.batch_size'),
    );
  });

  it('failure_strategy and rollback_strategy: the spec’s values only', () => {
    for (const failure_strategy of ['stop_on_first_failure', 'continue_on_failure', 'ignore_failures'])
      expect(create({ ...VALID, failure_strategy })).toBe('ok');
    for (const rollback_strategy of ['none', 'failed_target_only', 'all_executed'])
      expect(create({ ...VALID, rollback_strategy })).toBe('ok');
    expect(create({ ...VALID, failure_strategy: 'stop' })).toEqual(invalid('failure_strategy'));
    expect(create({ ...VALID, rollback_strategy: 'all' })).toEqual(invalid('rollback_strategy'));
  });

  it.each([
    ['priority', -100, 100, [-101, 101, 1.5, '5']],
    ['timeout_seconds', 1, 86_400, [0, 86_401, 10.5]],
    ['max_retries', 0, 10, [-1, 11]],
    ['deployment_timeout_seconds', 0, 604_800, [-1, 604_801]],
  ] as const)('%s: integers %d to %d', (field, min, max, bad) => {
    expect(create({ ...VALID, [field]: min })).toBe('ok');
    expect(create({ ...VALID, [field]: max })).toBe('ok');
    for (const value of bad) expect([value, create({ ...VALID, [field]: value })]).toEqual([value, invalid(field)]);
  });

  it('bypass_cache, dry_run and override_freeze are booleans', () => {
    expect(create({ ...VALID, bypass_cache: true, dry_run: false, override_freeze: false })).toBe('ok');
    for (const field of ['bypass_cache', 'dry_run', 'override_freeze'])
      expect(create({ ...VALID, [field]: 'true' })).toEqual(invalid(field));
  });
});

describe('CreateDeploymentBody: variables and prompted values', () => {
  it('map environment-variable names to strings; numbers and booleans are taken as text', () => {
    const parsed = parseWith(
      CreateDeploymentBody,
      { ...VALID, variables: { PORT: 8080, DEBUG: false, _X1: 'a' }, prompted_values: { TOKEN: 's' } },
      'body',
    );
    expect(parsed.variables).toEqual({ PORT: '8080', DEBUG: 'false', _X1: 'a' });
    expect(parsed.prompted_values).toEqual({ TOKEN: 's' });
  });

  it('refuse bad names, non-scalar values, huge values and too many entries', () => {
    expect(create({ ...VALID, variables: { '1BAD': 'x' } })).toEqual(invalid('variables.1BAD'));
    expect(create({ ...VALID, variables: { 'A-B': 'x' } })).toEqual(invalid('variables.A-B'));
    expect(create({ ...VALID, variables: { A: { nested: true } } })).toEqual(invalid('variables.A'));
    expect(create({ ...VALID, variables: { A: null } })).toEqual(invalid('variables.A'));
    expect(create({ ...VALID, prompted_values: { A: 'x'.repeat(16 * 1024 + 1) } })).toEqual(
      invalid('prompted_values.A'),
    );
    expect(
      create({ ...VALID, variables: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`V${i}`, 'x'])) }),
    ).toEqual(invalid('variables'));
    expect(create({ ...VALID, variables: 'A=1' })).toEqual(invalid('variables'));
  });

  it('refuse names of the deny list in any case, __proto__ included (valibot alone would drop it silently)', () => {
    for (const field of ['variables', 'prompted_values']) {
      for (const name of [
        'NODE_OPTIONS',
        'ld_preload',
        'SHELLOPTS',
        'PS4',
        'PYTHONWARNINGS',
        'BROWSER',
        'BASH_ENV',
        'DEPLOYER_STEP_ID',
        '__proto__',
      ]) {
        expect([name, create({ ...VALID, [field]: JSON.parse(`{"PORT": "1", "${name}": "x"}`) })]).toEqual([
          name,
          invalid(`${field}.${name}`),
        ]);
      }
    }
    expect(redeploy({ variables: JSON.parse('{"__proto__": "x"}') })).toEqual(invalid('variables.__proto__'));
    expect(create({ ...VALID, variables: { NODE_ENV: 'production', valueOf: 'v' } })).toBe('ok');
  });

  it('keep constructor, prototype, valueOf and toString as ordinary names (own keys only)', () => {
    const parsed = parseWith(
      CreateDeploymentBody,
      { ...VALID, variables: JSON.parse('{"constructor": "c", "prototype": "p", "valueOf": 1, "toString": true}') },
      'body',
    );
    expect(Object.entries(parsed.variables ?? {})).toEqual([
      ['constructor', 'c'],
      ['prototype', 'p'],
      ['valueOf', '1'],
      ['toString', 'true'],
    ]);
  });
});

describe('CreateDeploymentBody: tenant, environment, freeze override', () => {
  it('environment_id is required when tenant_id is given: MISSING_FIELD on environment_id (absent or null)', () => {
    expect(create({ ...VALID, tenant_id: 'acme', environment_id: 'prod' })).toBe('ok');
    expect(create({ ...VALID, environment_id: 'prod' })).toBe('ok');
    expect(create({ ...VALID, tenant_id: null })).toBe('ok');
    expect(create({ ...VALID, tenant_id: 'acme' })).toEqual({
      code: 'MISSING_FIELD',
      fields: ['environment_id:MISSING_FIELD'],
    });
    expect(create({ ...VALID, tenant_id: 'acme', environment_id: null })).toEqual({
      code: 'MISSING_FIELD',
      fields: ['environment_id:MISSING_FIELD'],
    });
  });

  it('override_reason is required when override_freeze is true: MISSING_FIELD, or VALIDATION_ERROR when blank', () => {
    expect(create({ ...VALID, override_freeze: true, override_reason: 'incident 42' })).toBe('ok');
    expect(create({ ...VALID, override_freeze: false })).toBe('ok');
    expect(create({ ...VALID, override_freeze: true })).toEqual({
      code: 'MISSING_FIELD',
      fields: ['override_reason:MISSING_FIELD'],
    });
    expect(create({ ...VALID, override_freeze: true, override_reason: null })).toEqual({
      code: 'MISSING_FIELD',
      fields: ['override_reason:MISSING_FIELD'],
    });
    expect(create({ ...VALID, override_freeze: true, override_reason: '   ' })).toEqual(invalid('override_reason'));
    expect(create({ ...VALID, override_reason: 'x'.repeat(2001) })).toEqual(invalid('override_reason'));
  });

  it('reports every cross-field problem at once', () => {
    expect(create({ tenant_id: 'acme', override_freeze: true })).toEqual({
      code: 'VALIDATION_ERROR',
      fields: [
        'solution_id:VALIDATION_ERROR',
        'sequence_id:VALIDATION_ERROR',
        'action_id:VALIDATION_ERROR',
        'target_ids:VALIDATION_ERROR',
        'target_tags:VALIDATION_ERROR',
        'environment_id:MISSING_FIELD',
        'override_reason:MISSING_FIELD',
      ],
    });
  });

  it('checks cross-field rules once every field is well-formed on its own', () => {
    expect(create({ priority: 500 })).toEqual(invalid('priority'));
  });

  it('a body that is not an object is a VALIDATION_ERROR on body', () => {
    expect(create('x')).toEqual(invalid('body'));
    expect(create(42)).toEqual(invalid('body'));
  });
});

describe('RedeployBody', () => {
  it('is all optional: an empty or missing body reuses the original', () => {
    expect(parseWith(RedeployBody, undefined, 'body')).toEqual({});
    expect(redeploy({})).toBe('ok');
  });

  it('has the create body’s ranges', () => {
    expect(
      redeploy({
        priority: 100,
        timeout_seconds: 1,
        max_retries: 10,
        target_mode: { rolling: { batch_size: 2 } },
        variables: { A: 'b' },
        bypass_cache: true,
      }),
    ).toBe('ok');
    expect(redeploy({ priority: 101 })).toEqual(invalid('priority'));
    expect(redeploy({ timeout_seconds: 0 })).toEqual(invalid('timeout_seconds'));
    expect(redeploy({ max_retries: 11 })).toEqual(invalid('max_retries'));
    expect(redeploy({ failure_strategy: 'x' })).toEqual(invalid('failure_strategy'));
    expect(redeploy({ variables: { 'bad name': 'x' } })).toEqual(invalid('variables.bad name'));
    expect(redeploy({ environment_id: null })).toEqual(invalid('environment_id'));
  });

  it('override_reason is required with override_freeze', () => {
    expect(redeploy({ override_freeze: true, override_reason: 'ok' })).toBe('ok');
    expect(redeploy({ override_freeze: true })).toEqual({
      code: 'MISSING_FIELD',
      fields: ['override_reason:MISSING_FIELD'],
    });
  });

  it('a new target selection must name at least one target', () => {
    expect(redeploy({ target_ids: ['t1'] })).toBe('ok');
    expect(redeploy({ target_ids: [], target_tags: [{ key: 'k', value: 'v' }] })).toBe('ok');
    expect(redeploy({ target_ids: [] })).toEqual(invalid('target_ids'));
    expect(redeploy({ target_ids: [], target_tags: [] })).toEqual(invalid('target_ids', 'target_tags'));
  });
});
