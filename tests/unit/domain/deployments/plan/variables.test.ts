import { describe, expect, it } from 'vitest';
import type { ActionVariable } from '../../../../../domain/catalog/types.js';
import { mergeRedeploy } from '../../../../../domain/deployments/plan/redeploy.js';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { configView, isSecretVariable } from '../../../../../domain/deployments/views.js';
import { ValidationError } from '../../../../../domain/errors.js';
import { ENCRYPTED_PREFIX, openVariable } from '../../../../../domain/shared/variable-secrets.js';
import { admin, fieldsOf, rejection, world } from './world.js';

const declared = (variables: Partial<ActionVariable>[]) =>
  variables.map((v) => ({ required: false, secret: false, default: null, description: null, ...v }));

describe('variables', () => {
  it('defaults, overridden by variables, overridden by prompted_values; unset optional ones warned', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      {
        version: '1.0.0',
        variables: declared([
          { name: 'PORT', default: '80' },
          { name: 'HOST', default: 'a' },
          { name: 'MODE', default: 'x' },
          { name: 'EXTRA' },
        ]),
      },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { HOST: 'b', MODE: 'y' },
      prompted_values: { MODE: 'z' },
    });
    // Assess
    expect(resolved.draft.plan.resolvedVariables).toEqual({
      PORT: { value: '80', secret: false },
      HOST: { value: 'b', secret: false },
      MODE: { value: 'z', secret: false },
    });
    expect(resolved.draft.config.variables).toEqual({ HOST: 'b', MODE: 'y' });
    expect(resolved.draft.config.promptedValues).toEqual({ MODE: 'z' });
    expect(resolved.draft.plan.warnings).toBeUndefined();
    expect(resolved.warnings).toContain("Variable EXTRA ('Act') has no value: its scripts see it unset.");
  });

  it('a required variable without a value is a 400 with one field per variable; a prompted value satisfies it', async () => {
    // Prepare
    const w = world();
    const a = await w.action('Deploy', [
      {
        version: '1.0.0',
        variables: declared([
          { name: 'TOKEN', required: true },
          { name: 'REGION', required: true },
        ]),
      },
    ]);
    const b = await w.action('Notify', [
      {
        version: '1.0.0',
        variables: declared([{ name: 'CHANNEL', required: true, default: '#ops' }, { name: 'REGION' }]),
      },
    ]);
    const seq = await w.sequence('Both', [{ action_id: a.id }, { action_id: b.id }]);
    w.target('web-1');
    // Act
    const error = await rejection(resolveDeployment(w.deps, admin, { sequence_id: seq.id, target_ids: ['tg1'] }));
    const ok = await resolveDeployment(w.deps, admin, {
      sequence_id: seq.id,
      target_ids: ['tg1'],
      variables: { TOKEN: 't' },
      prompted_values: { REGION: 'eu' },
    });
    // Assess
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['variables.TOKEN', 'variables.REGION']]);
    expect(error.message).toContain("Variable REGION is required by 'Deploy', 'Notify' and has no value.");
    expect(Object.keys(ok.draft.plan.resolvedVariables)).toEqual(['TOKEN', 'REGION', 'CHANNEL']);
    expect(ok.draft.plan.resolvedVariables['CHANNEL']?.value).toBe('#ops');
  });

  it.each(['valueOf', 'toString', 'constructor', 'hasOwnProperty'])(
    'a required variable named like an object member (%s) is an ordinary name: without a value it is a 400',
    async (name) => {
      // Prepare
      const w = world();
      const act = await w.action('Act', [{ version: '1.0.0', variables: declared([{ name, required: true }]) }]);
      w.target('web-1');
      // Act
      const error = await rejection(resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg1'] }));
      const ok = await resolveDeployment(w.deps, admin, {
        action_id: act.id,
        target_ids: ['tg1'],
        variables: { [name]: 'given' },
      });
      // Assess
      expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', [`variables.${name}`]]);
      expect(Object.hasOwn(ok.draft.plan.resolvedVariables, name)).toBe(true);
      expect(ok.draft.plan.resolvedVariables[name]?.value).toBe('given');
    },
  );
});

describe('variables: secrets', () => {
  it('secret values are encrypted wherever the draft keeps them, and never appear in plain text', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      {
        version: '1.0.0',
        variables: declared([
          { name: 'API_TOKEN', secret: true, required: true },
          { name: 'DB_PASSWORD', secret: true },
          { name: 'PLAIN' },
        ]),
      },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { API_TOKEN: 'hunter2-body', PLAIN: 'visible' },
      prompted_values: { API_TOKEN: 'hunter2-prompted', DB_PASSWORD: 'pa55word' },
    });
    // Assess
    const json = JSON.stringify(resolved.draft);
    for (const secret of ['hunter2-body', 'hunter2-prompted', 'pa55word']) expect(json).not.toContain(secret);
    expect(json).toContain('visible');
    const { resolvedVariables } = resolved.draft.plan;
    expect(resolvedVariables['API_TOKEN']?.secret).toBe(true);
    expect(resolvedVariables['API_TOKEN']?.value.startsWith(ENCRYPTED_PREFIX)).toBe(true);
    expect(openVariable(w.cipher, resolvedVariables['API_TOKEN']!.value, true)).toBe('hunter2-prompted');
    expect(openVariable(w.cipher, resolvedVariables['DB_PASSWORD']!.value, true)).toBe('pa55word');
    expect(openVariable(w.cipher, resolved.draft.config.variables['API_TOKEN']!, true)).toBe('hunter2-body');
    expect(openVariable(w.cipher, resolved.draft.config.promptedValues['DB_PASSWORD']!, true)).toBe('pa55word');
    expect(resolved.draft.config.variables['PLAIN']).toBe('visible');
  });
  it('whether a value is secret is the stored flag: NOTE=enc:x is an ordinary value, shown and reused exactly as given', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      { version: '1.0.0', variables: declared([{ name: 'NOTE' }, { name: 'TOKEN', secret: true }]) },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { NOTE: 'enc:x', TOKEN: 'enc:y' },
    });
    const again = mergeRedeploy(w.cipher, resolved.draft, {});
    const shown = configView(resolved.draft.config, (name) => isSecretVariable(resolved.draft.plan, name));
    // Assess
    expect(resolved.draft.plan.resolvedVariables['NOTE']).toEqual({ value: 'enc:x', secret: false });
    expect(openVariable(w.cipher, 'enc:x', false)).toBe('enc:x');
    expect(openVariable(w.cipher, resolved.draft.plan.resolvedVariables['TOKEN']!.value, true)).toBe('enc:y');
    expect(shown.variables).toEqual({ NOTE: 'enc:x', TOKEN: '***' });
    expect(again.variables).toEqual({ NOTE: 'enc:x', TOKEN: 'enc:y' });
  });
});

describe('variables: names', () => {
  it('a variable no action of the plan declares is a 400, one field per name, in variables and prompted_values', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [{ version: '1.0.0', variables: declared([{ name: 'PORT' }]) }]);
    w.target('web-1');
    // Act
    const error = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: act.id,
        target_ids: ['tg1'],
        variables: { PORT: '80', OTHER: 'x' },
        prompted_values: { EXTRA: 'y' },
      }),
    );
    // Assess
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['variables.OTHER', 'prompted_values.EXTRA']]);
    expect(error instanceof ValidationError && error.fields.map((f) => f.message)).toEqual([
      'Variable OTHER is not declared by any action of the plan',
      'Variable EXTRA is not declared by any action of the plan',
    ]);
  });

  it.each([
    ['variables', 'NODE_OPTIONS'],
    ['variables', 'LD_PRELOAD'],
    ['variables', 'ld_preload'],
    ['prompted_values', 'PS4'],
    ['prompted_values', 'BASH_ENV'],
    ['variables', '__proto__'],
  ] as const)('a refused name is a 400 on %s.%s even when nothing declares it', async (field, name) => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [{ version: '1.0.0', variables: declared([{ name: 'PORT' }]) }]);
    w.target('web-1');
    const map = Object.fromEntries([[name, 'x']]); // an own `__proto__` key, as JSON.parse makes it
    // Act
    const error = await rejection(
      resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg1'], [field]: map }),
    );
    // Assess
    expect(fieldsOf(error)).toEqual([`${field}.${name}`]);
    expect(error.message).toContain(`Variable ${name} is not allowed in a command's environment`);
  });

  it('valueOf, constructor and toString are ordinary names: declared, given and resolved like any other', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      {
        version: '1.0.0',
        variables: declared([{ name: 'valueOf' }, { name: 'constructor', default: 'c' }, { name: 'toString' }]),
      },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { valueOf: 'v' },
    });
    const undeclared = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: (await w.action('Bare', ['1.0.0'])).id,
        target_ids: ['tg1'],
        variables: { hasOwnProperty: 'h' },
      }),
    );
    // Assess
    expect(resolved.draft.plan.resolvedVariables).toEqual({
      valueOf: { value: 'v', secret: false },
      constructor: { value: 'c', secret: false },
    });
    expect(fieldsOf(undeclared)).toEqual(['variables.hasOwnProperty']);
  });

  it('an action version stored before the rule that declares a refused name refuses the plan, naming the action and the variable', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Old', [{ version: '1.0.0', variables: declared([{ name: 'PORT' }]) }]);
    const stored = w.catalog.actions.versions.get(act.id)!;
    w.catalog.actions.versions.set(act.id, [
      {
        ...stored[0]!,
        variables: [
          ...stored[0]!.variables,
          { name: 'NODE_OPTIONS', description: null, required: false, default: '--import=x', secret: false },
        ],
      },
    ]);
    w.target('web-1');
    // Act
    const error = await rejection(resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg1'] }));
    // Assess
    expect(fieldsOf(error)).toEqual(['action_id']);
    expect(error.message).toContain("Action 'Old' 1.0.0 declares variable NODE_OPTIONS, which is refused");
  });
});
