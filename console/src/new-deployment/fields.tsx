// The new-deployment form's three fieldsets: what (kind, source, version range), where (environment, targets by
// list or by tags, with a live count of those that match), and how (order, failure strategy, priority, variables).
import type { Kind, NewDeploymentForm } from './use-form.js';

const valueOf = (e: Event) => (e.target as HTMLInputElement).value;

export const WhatFields = ({ form: f }: { form: NewDeploymentForm }) => (
  <fieldset>
    <legend>What</legend>
    <label for="new-kind">Kind</label>
    <select id="new-kind" value={f.kind} onChange={(e) => f.setKind(valueOf(e) as Kind)}>
      <option value="action">Action</option>
      <option value="sequence">Sequence</option>
      <option value="solution">Solution</option>
    </select>
    <label for="new-source">{f.kind[0]!.toUpperCase() + f.kind.slice(1)}</label>
    <select id="new-source" required value={f.sourceId} onChange={(e) => f.setSourceId(valueOf(e))}>
      <option value="">Choose…</option>
      {f.sources.map((s) => (
        <option value={s.id}>
          {s.name}
          {s.latest_version ? ` (${s.latest_version})` : ''}
        </option>
      ))}
    </select>
    <label for="new-version">Version range</label>
    <input id="new-version" value={f.version} placeholder="latest, or ^1.2" onInput={(e) => f.setVersion(valueOf(e))} />
  </fieldset>
);

const TargetChoices = ({ form: f }: { form: NewDeploymentForm }) =>
  f.byTags ? (
    <>
      <label>
        Tags <input value={f.tags} placeholder="role=web, env=prod" onInput={(e) => f.setTags(valueOf(e))} />
      </label>
      <label>
        <input
          type="checkbox"
          checked={f.matchAll}
          onChange={(e) => f.setMatchAll((e.target as HTMLInputElement).checked)}
        />{' '}
        A target must have every tag
      </label>
    </>
  ) : (
    <div class="choices">
      {f.targets.map((t) => (
        <label>
          <input
            type="checkbox"
            value={t.id}
            checked={f.chosen.has(t.id)}
            onChange={(e) => {
              const next = new Set(f.chosen);
              if ((e.target as HTMLInputElement).checked) next.add(t.id);
              else next.delete(t.id);
              f.setChosen(next);
            }}
          />{' '}
          {t.name} <span class="muted">({t.status})</span>
        </label>
      ))}
    </div>
  );

export const WhereFields = ({ form: f }: { form: NewDeploymentForm }) => (
  <fieldset>
    <legend>Where</legend>
    {f.environments.length === 0 ? null : (
      <label>
        Environment{' '}
        <select value={f.environmentId} onChange={(e) => f.setEnvironmentId(valueOf(e))}>
          <option value="">None</option>
          {f.environments.map((env) => (
            <option key={env.id} value={env.id}>
              {env.name}
            </option>
          ))}
        </select>
      </label>
    )}
    <label>
      <input type="radio" name="by" checked={!f.byTags} onChange={() => f.setByTags(false)} /> Choose targets
    </label>
    <label>
      <input type="radio" name="by" checked={f.byTags} onChange={() => f.setByTags(true)} /> Targets with tags
    </label>
    <TargetChoices form={f} />
    <p role="status" data-testid="matching">
      {f.matching} {f.matching === 1 ? 'target matches' : 'targets match'}
    </p>
  </fieldset>
);

const DeclaredVariables = ({ form: f }: { form: NewDeploymentForm }) =>
  f.declared.length === 0 ? null : (
    <fieldset class="variables" data-testid="declared-variables">
      <legend>Variables of this action</legend>
      {f.declared.map((d) => (
        <label key={d.name}>
          <code>{d.name}</code>
          {d.required ? <span class="muted"> (required)</span> : null}
          {d.description ? <span class="muted"> {d.description}</span> : null}{' '}
          <input
            name={`var-${d.name}`}
            type={(d.secret ? 'password' : 'text') as 'text'}
            autocomplete="off"
            required={d.required && d.default === null}
            placeholder={d.secret ? 'secret' : (d.default ?? '')}
            value={f.declaredValues[d.name] ?? ''}
            onInput={(e) => f.setDeclaredValues({ ...f.declaredValues, [d.name]: valueOf(e) })}
          />
        </label>
      ))}
    </fieldset>
  );

export const HowFields = ({ form: f }: { form: NewDeploymentForm }) => (
  <fieldset>
    <legend>How</legend>
    <label>
      Order{' '}
      <select value={f.mode} onChange={(e) => f.setMode(valueOf(e))}>
        <option value="sequential">One target after another</option>
        <option value="parallel">All at once</option>
      </select>
    </label>
    <label>
      On failure{' '}
      <select value={f.failure} onChange={(e) => f.setFailure(valueOf(e))}>
        <option value="stop_on_first_failure">Stop at the first failure</option>
        <option value="continue_on_failure">Continue</option>
        <option value="ignore_failures">Ignore failures</option>
      </select>
    </label>
    <label>
      Priority (-100 to 100){' '}
      <input type="number" min={-100} max={100} value={f.priority} onInput={(e) => f.setPriority(Number(valueOf(e)))} />
    </label>
    <DeclaredVariables form={f} />
    <label>
      {f.declared.length === 0 ? 'Variables' : 'Other variables'} (NAME=value, one per line)
      <textarea rows={3} value={f.variables} onInput={(e) => f.setVariables(valueOf(e))} />
    </label>
  </fieldset>
);
