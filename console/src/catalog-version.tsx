// An action version as the catalog shows it (read only) and as its form writes it: the version string, the script in
// the script editor, the interpreter, a rollback script, a timeout, the variables (name, description, required,
// default, secret) and a changelog: the spec's CreateActionVersionRequest (decisions.md section 5).
import { ScriptEditor } from './script-editor.js';
import { when } from './format.js';

export const INTERPRETERS = ['sh', 'bash', 'node', 'python3'] as const;

export interface Variable {
  readonly name: string;
  readonly description: string | null;
  readonly required: boolean;
  readonly default: string | null;
  readonly secret: boolean;
}

export interface Version {
  readonly id: string;
  readonly version: string;
  readonly script: string;
  readonly interpreter: string;
  readonly rollback_script: string | null;
  readonly timeout_seconds: number | null;
  readonly variables: readonly Variable[];
  readonly changelog: string | null;
  readonly created_at: string;
}

/** What the form holds: text fields as typed. */
export interface VersionDraft {
  readonly version: string;
  readonly script: string;
  readonly interpreter: string;
  readonly rollback_script: string;
  readonly timeout_seconds: string;
  readonly variables: readonly {
    key: number;
    name: string;
    description: string;
    required: boolean;
    default: string;
    secret: boolean;
  }[];
  readonly changelog: string;
}

let nextKey = 1;

export const emptyDraft = (version = '1.0.0'): VersionDraft => ({
  version,
  script: '',
  interpreter: 'sh',
  rollback_script: '',
  timeout_seconds: '',
  variables: [],
  changelog: '',
});

/** The next patch version of `version` when it is plain x.y.z, else empty. */
export const nextPatch = (version: string): string => {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  return m === null ? '' : `${m[1]}.${m[2]}.${Number(m[3]) + 1}`;
};

/** A draft starting from an existing version (its script and variables), numbered as the next patch. */
export const draftFrom = (v: Version): VersionDraft => ({
  version: nextPatch(v.version),
  script: v.script,
  interpreter: v.interpreter,
  rollback_script: v.rollback_script ?? '',
  timeout_seconds: v.timeout_seconds === null ? '' : String(v.timeout_seconds),
  variables: v.variables.map((x) => ({
    key: nextKey++,
    name: x.name,
    description: x.description ?? '',
    required: x.required,
    default: x.default ?? '',
    secret: x.secret,
  })),
  changelog: '',
});

/** The request body: empty optional fields left out (a secret variable never carries a default). */
export const versionBody = (d: VersionDraft) => ({
  version: d.version.trim(),
  script: d.script,
  interpreter: d.interpreter,
  ...(d.rollback_script.trim() === '' ? {} : { rollback_script: d.rollback_script }),
  ...(d.timeout_seconds.trim() === '' ? {} : { timeout_seconds: Number(d.timeout_seconds) }),
  variables: d.variables
    .filter((x) => x.name.trim() !== '')
    .map((x) => ({
      name: x.name.trim(),
      ...(x.description.trim() === '' ? {} : { description: x.description.trim() }),
      required: x.required,
      ...(x.secret || x.default === '' ? {} : { default: x.default }),
      secret: x.secret,
    })),
  ...(d.changelog.trim() === '' ? {} : { changelog: d.changelog.trim() }),
});

const text = (e: Event) => (e.target as HTMLInputElement).value;
const checked = (e: Event) => (e.target as HTMLInputElement).checked;

type VariableDraft = VersionDraft['variables'][number];

/** One variable of a version being edited: name, description, default, required, secret, and Remove. */
const VariableRow = ({
  x,
  index,
  setVariable,
  remove,
}: {
  x: VariableDraft;
  index: number;
  setVariable: (key: number, patch: Partial<VariableDraft>) => void;
  remove: () => void;
}) => (
  <fieldset class="variable-row">
    <legend>Variable {index + 1}</legend>
    <label>
      Name{' '}
      <input
        required
        value={x.name}
        pattern="[A-Za-z_][A-Za-z0-9_]*"
        title="Letters, digits and _, not starting with a digit"
        onInput={(e) => setVariable(x.key, { name: text(e) })}
      />
    </label>
    <label>
      Description <input value={x.description} onInput={(e) => setVariable(x.key, { description: text(e) })} />
    </label>
    <label>
      Default{' '}
      <input
        value={x.secret ? '' : x.default}
        disabled={x.secret}
        placeholder={x.secret ? 'given at deployment time' : ''}
        onInput={(e) => setVariable(x.key, { default: text(e) })}
      />
    </label>
    <label>
      <input type="checkbox" checked={x.required} onChange={(e) => setVariable(x.key, { required: checked(e) })} />{' '}
      Required
    </label>
    <label>
      <input type="checkbox" checked={x.secret} onChange={(e) => setVariable(x.key, { secret: checked(e) })} /> Secret
      (masked in output, never stored in the catalog)
    </label>
    <button type="button" aria-label={`Remove variable ${x.name === '' ? index + 1 : x.name}`} onClick={remove}>
      Remove
    </button>
  </fieldset>
);

/** The fields of a version; `prefix` keeps ids unique when two forms share the page. */
export const VersionFields = ({
  prefix,
  draft,
  onChange,
}: {
  prefix: string;
  draft: VersionDraft;
  onChange: (draft: VersionDraft) => void;
}) => {
  const set = (patch: Partial<VersionDraft>) => onChange({ ...draft, ...patch });
  const setVariable = (key: number, patch: Partial<VariableDraft>) =>
    set({ variables: draft.variables.map((x) => (x.key === key ? { ...x, ...patch } : x)) });
  return (
    <>
      <div class="inline-form">
        <label>
          Version{' '}
          <input
            name="version"
            required
            value={draft.version}
            placeholder="1.0.0"
            onInput={(e) => set({ version: text(e) })}
          />
        </label>
        <label>
          Interpreter{' '}
          <select name="interpreter" value={draft.interpreter} onChange={(e) => set({ interpreter: text(e) })}>
            {INTERPRETERS.map((i) => (
              <option key={i} value={i}>
                {i}
              </option>
            ))}
          </select>
        </label>
        <label>
          Timeout in seconds{' '}
          <input
            name="timeout_seconds"
            type="number"
            min={1}
            max={86400}
            value={draft.timeout_seconds}
            placeholder="the deployment's"
            onInput={(e) => set({ timeout_seconds: text(e) })}
          />
        </label>
      </div>
      <ScriptEditor
        id={`${prefix}-script`}
        label="Script"
        required
        value={draft.script}
        onInput={(script) => set({ script })}
      />
      <ScriptEditor
        id={`${prefix}-rollback`}
        label="Rollback script (optional)"
        rows={4}
        value={draft.rollback_script}
        onInput={(rollback_script) => set({ rollback_script })}
      />
      <fieldset class="variables-editor">
        <legend>Variables</legend>
        {draft.variables.length === 0 ? <p class="muted">The script reads no variables.</p> : null}
        {draft.variables.map((x, index) => (
          <VariableRow
            key={x.key}
            x={x}
            index={index}
            setVariable={setVariable}
            remove={() => set({ variables: draft.variables.filter((y) => y.key !== x.key) })}
          />
        ))}
        <button
          type="button"
          onClick={() =>
            set({
              variables: [
                ...draft.variables,
                { key: nextKey++, name: '', description: '', required: false, default: '', secret: false },
              ],
            })
          }
        >
          Add variable
        </button>
      </fieldset>
      <label>
        Changelog (optional) <textarea rows={2} value={draft.changelog} onInput={(e) => set({ changelog: text(e) })} />
      </label>
    </>
  );
};

/** One version, read only: its script, rollback script and variables. */
export const VersionView = ({ version: v, children }: { version: Version; children?: preact.ComponentChildren }) => (
  <section class="version" aria-labelledby={`version-${v.id}`} data-version={v.version}>
    <h3 id={`version-${v.id}`}>
      Version {v.version} <span class="muted">{when(v.created_at)}</span>
    </h3>
    {v.changelog ? <p>{v.changelog}</p> : null}
    <p class="muted">
      {v.interpreter}
      {v.timeout_seconds === null ? '' : `, timeout ${v.timeout_seconds} s`}
    </p>
    <pre class="command" aria-label={`Script of version ${v.version}`}>
      {v.script}
    </pre>
    {v.rollback_script ? (
      <>
        <p>Rollback script:</p>
        <pre class="command">{v.rollback_script}</pre>
      </>
    ) : null}
    {v.variables.length === 0 ? (
      <p class="muted">No variables.</p>
    ) : (
      <div class="table-scroll" tabIndex={0} role="region" aria-label={`Variables of version ${v.version}`}>
        <table class="list variables whole-words">
          <caption class="visually-hidden">Variables of version {v.version}</caption>
          <thead>
            <tr>
              <th scope="col">Variable</th>
              <th scope="col">Required</th>
              <th scope="col">Default</th>
              <th scope="col">Secret</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {v.variables.map((x) => (
              <tr key={x.name}>
                <td>
                  <code>{x.name}</code>
                </td>
                <td>{x.required ? 'required' : 'optional'}</td>
                <td>{x.secret ? '—' : (x.default ?? '—')}</td>
                <td>{x.secret ? 'secret' : 'no'}</td>
                <td>{x.description ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
    {children}
  </section>
);
