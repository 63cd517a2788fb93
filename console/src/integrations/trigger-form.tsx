// A deploy trigger's fields: what a call's JSON fills in and which calls deploy (`NAME = path` and `path = value`
// lines), and the new-trigger form (what to deploy where, fixed variables, enabled).
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { parseTags, tagsText } from '../fleet-widgets.js';
import type { Filter, Rules } from './signed-call.js';
import type { Kind, Sources, Trigger } from './trigger-records.js';

/** `NAME = path` lines as a record (blank lines dropped). */
const pairsOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1).trim()]),
  );
export const pairsText = (record: Record<string, string>) =>
  Object.entries(record)
    .map(([k, v]) => `${k} = ${v}`)
    .join('\n');

/** `field = a, b` lines as filters. */
const filtersOf = (text: string): Filter[] =>
  Object.entries(pairsOf(text)).map(([field, values]) => ({
    field,
    one_of: values
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== ''),
  }));
export const filtersText = (filters: readonly Filter[]) =>
  filters.map((f) => `${f.field} = ${f.one_of.join(', ')}`).join('\n');

/** The rules and filters of a trigger's form (RuleFields). */
export const rulesAndFilters = (form: FormData) => {
  const version = String(form.get('version_path') ?? '').trim();
  return {
    rules: {
      variables: pairsOf(String(form.get('variable_paths') ?? '')),
      version_requirement: version === '' ? null : version,
    },
    filters: filtersOf(String(form.get('filters') ?? '')),
  };
};

/** What a call's JSON fills in, and which calls deploy at all. */
export const RuleFields = ({ rules, filters }: { rules: Rules; filters: readonly Filter[] }) => (
  <>
    <label>
      Version from the call (a path in its JSON, e.g. release.version)
      <input name="version_path" defaultValue={rules.version_requirement ?? ''} />
    </label>
    <label>
      Variables from the call (NAME = path, one a line)
      <textarea name="variable_paths" rows={2} class="mono" defaultValue={pairsText(rules.variables)} />
    </label>
    <label>
      Deploy only when (path = value, value…; one a line, e.g. ref = refs/heads/main)
      <textarea name="filters" rows={2} class="mono" defaultValue={filtersText(filters)} />
    </label>
  </>
);

/** The request body of the new-trigger form. */
const newTrigger = (form: FormData, kind: Kind) => {
  const version = String(form.get('version_requirement') ?? '').trim();
  const description = String(form.get('description') ?? '').trim();
  const variables = pairsOf(String(form.get('variables') ?? ''));
  return {
    name: String(form.get('name') ?? '').trim(),
    ...(description === '' ? {} : { description }),
    request: {
      [`${kind}_id`]: String(form.get('source') ?? ''),
      ...(version === '' ? {} : { version_requirement: version }),
      target_tags: parseTags(String(form.get('target_tags') ?? '')),
      ...(form.get('match_all') === 'on' ? { target_tags_match_all: true } : {}),
      ...(Object.keys(variables).length === 0 ? {} : { variables }),
    },
    ...rulesAndFilters(form),
    enabled: form.get('enabled') === 'on',
  };
};

export const NewTriggerForm = ({
  sources,
  change,
  onCreated,
}: {
  sources: Sources;
  change: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
  onCreated: (trigger: Trigger, secret: string) => void;
}) => {
  const [kind, setKind] = useState<Kind>('action');
  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const body = newTrigger(new FormData(formElement), kind);
    let created: (Trigger & { secret: string }) | undefined;
    const ok = await change(async () => {
      created = await api<Trigger & { secret: string }>('POST', '/triggers', body);
    }, `Trigger ${body.name} created.`);
    if (ok && created !== undefined) {
      onCreated(created, created.secret);
      formElement.reset();
    }
  };
  return (
    <form class="stack-form" aria-label="New trigger" onSubmit={(e) => void create(e)}>
      <fieldset>
        <legend>New trigger</legend>
        <label>
          Name <input name="name" required maxLength={255} />
        </label>
        <label>
          Description <input name="description" maxLength={1000} />
        </label>
        <label>
          Deploys a
          <select value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as Kind)}>
            <option value="action">single action</option>
            <option value="sequence">sequence</option>
            <option value="solution">solution</option>
          </select>
        </label>
        <label>
          Which {kind}
          <select name="source" required>
            <option value="">Choose…</option>
            {sources[kind].map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Version (a range; empty: the latest) <input name="version_requirement" placeholder="^1.2" />
        </label>
        <label>
          Targets with tags (key=value, comma-separated)
          <input name="target_tags" required placeholder="role=web, env=prod" />
        </label>
        <label>
          <input type="checkbox" name="match_all" /> Targets must have every tag
        </label>
        <label>
          Fixed variables (NAME = value, one a line)
          <textarea name="variables" rows={2} class="mono" />
        </label>
        <RuleFields rules={{ variables: {}, version_requirement: null }} filters={[]} />
        <label>
          <input type="checkbox" name="enabled" defaultChecked /> Enabled
        </label>
        <button type="submit">Create trigger</button>
      </fieldset>
    </form>
  );
};

/** The mask the API shows in place of a saved value (a saved value may be a secret). */
export const MASK = '***';

/**
 * An edited saved request: the one read (every field kept, the values masked), with its version, target tags and
 * fixed variables from the form. A variable left as `***` keeps its saved value (the API swaps the mask back), a
 * typed value replaces it, and a line removed drops it.
 */
export const editedRequest = (request: Trigger['request'], form: FormData) => {
  const version = String(form.get('version_requirement') ?? '').trim();
  const { version_requirement: _v, target_tags_match_all: _m, variables: _x, ...rest } = request;
  const variables = pairsOf(String(form.get('variables') ?? ''));
  return {
    ...rest,
    ...(version === '' ? {} : { version_requirement: version }),
    ...(rest.target_ids !== undefined && rest.target_ids.length > 0
      ? {}
      : { target_tags: parseTags(String(form.get('target_tags') ?? '')) }),
    ...(form.get('match_all') === 'on' ? { target_tags_match_all: true } : {}),
    ...(Object.keys(variables).length === 0 ? {} : { variables }),
  };
};

/** The saved request's editable fields: version, target tags (unless it names targets), fixed variables. */
export const RequestFields = ({ request }: { request: Trigger['request'] }) => (
  <>
    <label>
      Version (a range; empty: the latest)
      <input name="version_requirement" placeholder="^1.2" defaultValue={request.version_requirement ?? ''} />
    </label>
    {request.target_ids !== undefined && request.target_ids.length > 0 ? null : (
      <>
        <label>
          Targets with tags (key=value, comma-separated)
          <input name="target_tags" required defaultValue={tagsText(request.target_tags ?? [])} />
        </label>
        <label>
          <input type="checkbox" name="match_all" defaultChecked={request.target_tags_match_all === true} /> Targets
          must have every tag
        </label>
      </>
    )}
    <label>
      Fixed variables (NAME = value, one a line; {MASK} keeps the saved value, which is never shown)
      <textarea name="variables" rows={2} class="mono" defaultValue={pairsText(request.variables ?? {})} />
    </label>
  </>
);
