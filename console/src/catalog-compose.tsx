// Sequences (ordered action steps, each with an optional version range) and solutions (ordered sequences), at
// #/catalog/sequences/<id> and #/catalog/solutions/<id> (`new` to create), within the caller's permissions: create,
// edit name, description, version and the ordered members, delete (confirmed in the page). Members are shown by name.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { nameIn, useList } from './use-list.js';
import { when } from './format.js';
import { BackToCatalog, RecordHead, RecordLoading } from './catalog-head.js';
import { ErrorLine, NoticeLine, useChanges } from './widgets.js';

export type ComposedKind = 'sequences' | 'solutions';

interface Member {
  readonly order: number;
  readonly action_id?: string;
  readonly sequence_id?: string;
  readonly version_requirement?: string | null;
}

export interface Composed {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly version: string;
  readonly updated_at: string;
  readonly steps?: readonly Member[];
  readonly sequences?: readonly Member[];
}

interface Row {
  readonly key: number;
  readonly ref: string;
  readonly requirement: string;
}

/** What differs between the two kinds: the member list's field, what a member is, and the words. */
const KINDS = {
  sequences: {
    one: 'sequence',
    list: 'steps',
    ref: 'action_id',
    member: 'action',
    memberPath: '/actions',
    memberWord: 'Step',
  },
  solutions: {
    one: 'solution',
    list: 'sequences',
    ref: 'sequence_id',
    member: 'sequence',
    memberPath: '/sequences',
    memberWord: 'Sequence',
  },
} as const;

let nextKey = 1;

export const membersOf = (record: Composed, kind: ComposedKind): Member[] =>
  [...((kind === 'sequences' ? record.steps : record.sequences) ?? [])].sort((a, b) => a.order - b.order);

const refOf = (m: Member): string => m.action_id ?? m.sequence_id ?? '';

/** The members in order, by name: `deploy-web ^1.2 → smoke-test`. */
export const memberLine = (
  record: Composed,
  kind: ComposedKind,
  names: readonly { id: string; name: string }[] | undefined,
): string =>
  membersOf(record, kind)
    .map((m) => `${nameIn(names, refOf(m))}${m.version_requirement ? ` ${m.version_requirement}` : ''}`)
    .join(' → ');

/** One member of the list being edited: what it is, its version range (steps only), and Up, Down, Remove. */
const MemberRow = ({
  kind,
  r,
  index,
  count,
  options,
  setRow,
  move,
  remove,
}: {
  kind: ComposedKind;
  r: Row;
  index: number;
  count: number;
  options: readonly { id: string; name: string }[];
  setRow: (key: number, patch: Partial<Row>) => void;
  move: (index: number, by: number) => void;
  remove: () => void;
}) => {
  const k = KINDS[kind];
  return (
    <li class="member-row">
      <label>
        {k.memberWord} {index + 1}{' '}
        <select required value={r.ref} onChange={(e) => setRow(r.key, { ref: (e.target as HTMLSelectElement).value })}>
          <option value="">Choose {k.member === 'action' ? 'an action' : 'a sequence'}…</option>
          {options.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </label>
      {kind === 'sequences' ? (
        <label>
          Version range of step {index + 1}{' '}
          <input
            value={r.requirement}
            placeholder="latest, or ^1.2"
            onInput={(e) => setRow(r.key, { requirement: (e.target as HTMLInputElement).value })}
          />
        </label>
      ) : null}
      <span class="buttons">
        <button
          type="button"
          disabled={index === 0}
          aria-label={`Move ${k.memberWord.toLowerCase()} ${index + 1} up`}
          onClick={() => move(index, -1)}
        >
          Up
        </button>
        <button
          type="button"
          disabled={index === count - 1}
          aria-label={`Move ${k.memberWord.toLowerCase()} ${index + 1} down`}
          onClick={() => move(index, 1)}
        >
          Down
        </button>
        <button
          type="button"
          disabled={count === 1}
          aria-label={`Remove ${k.memberWord.toLowerCase()} ${index + 1}`}
          onClick={remove}
        >
          Remove
        </button>
      </span>
    </li>
  );
};

const ComposedForm = ({
  kind,
  record,
  options,
  onSubmit,
  onClose,
}: {
  kind: ComposedKind;
  record: Composed | undefined;
  options: readonly { id: string; name: string }[];
  onSubmit: (body: Record<string, unknown>) => Promise<boolean>;
  onClose?: () => void;
}) => {
  const k = KINDS[kind];
  const [rows, setRows] = useState<Row[]>(() =>
    record === undefined
      ? [{ key: nextKey++, ref: '', requirement: '' }]
      : membersOf(record, kind).map((m) => ({
          key: nextKey++,
          ref: refOf(m),
          requirement: m.version_requirement ?? '',
        })),
  );
  const setRow = (key: number, patch: Partial<Row>) =>
    setRows(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const move = (index: number, by: number) => {
    const next = [...rows];
    const [row] = next.splice(index, 1);
    next.splice(index + by, 0, row!);
    setRows(next);
  };
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const description = String(form.get('description')).trim();
    const version = String(form.get('version')).trim();
    const done = await onSubmit({
      name: String(form.get('name')).trim(),
      description: description === '' ? null : description,
      ...(version === '' ? {} : { version }),
      [k.list]: rows.map((r, index) => ({
        order: index + 1,
        [k.ref]: r.ref,
        ...(kind === 'sequences'
          ? { version_requirement: r.requirement.trim() === '' ? null : r.requirement.trim() }
          : {}),
      })),
    });
    if (done && record === undefined) (event.target as HTMLFormElement).reset();
  };
  const title = record === undefined ? `New ${k.one}` : `Edit ${k.one} ${record.name}`;
  return (
    <form class="stack-form" aria-label={title} onSubmit={(e) => void submit(e)}>
      <fieldset>
        <legend>{title}</legend>
        <label>
          Name <input name="name" required defaultValue={record?.name ?? ''} />
        </label>
        <label>
          Description <input name="description" defaultValue={record?.description ?? ''} />
        </label>
        <label>
          Version <input name="version" defaultValue={record?.version ?? ''} placeholder="1.0.0" />
        </label>
        <fieldset class="members">
          <legend>{kind === 'sequences' ? 'Steps, in order' : 'Sequences, in order'}</legend>
          <ol class="members">
            {rows.map((r, index) => (
              <MemberRow
                key={r.key}
                kind={kind}
                r={r}
                index={index}
                count={rows.length}
                options={options}
                setRow={setRow}
                move={move}
                remove={() => setRows(rows.filter((x) => x.key !== r.key))}
              />
            ))}
          </ol>
          <button type="button" onClick={() => setRows([...rows, { key: nextKey++, ref: '', requirement: '' }])}>
            Add {k.memberWord.toLowerCase()}
          </button>
        </fieldset>
        <div class="buttons">
          <button type="submit">{record === undefined ? `Create ${k.one}` : `Save ${k.one}`}</button>
          {onClose === undefined ? null : (
            <button type="button" onClick={onClose}>
              Close
            </button>
          )}
        </div>
      </fieldset>
    </form>
  );
};

export const ComposedPage = ({
  kind,
  id,
  permissions,
}: {
  kind: ComposedKind;
  id: string;
  permissions: ReadonlySet<string>;
}) => {
  const k = KINDS[kind];
  const { rows: options } = useList<{ id: string; name: string }>(k.memberPath);
  const [record, setRecord] = useState<Composed | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [editing, setEditing] = useState(false);
  const isNew = id === 'new';
  const path = `/${kind}/${encodeURIComponent(id)}`;
  const load = async () => {
    if (isNew) return;
    try {
      setRecord(await api<Composed>('GET', path));
      setLoadError(undefined);
    } catch (e) {
      setLoadError(errorText(e));
    }
  };
  const { error, notice, change } = useChanges(load);
  useEffect(() => {
    void load();
  }, [kind, id]);

  const heading = `${k.one[0]!.toUpperCase()}${k.one.slice(1)}`;
  if (isNew)
    return (
      <section aria-labelledby="composed-title">
        <BackToCatalog />
        <h1 id="composed-title">New {k.one}</h1>
        <ErrorLine message={error} />
        <ComposedForm
          kind={kind}
          record={undefined}
          options={options ?? []}
          onSubmit={(body) =>
            change(
              async () => {
                const created = await api<{ id: string }>('POST', `/${kind}`, body);
                window.location.hash = `#/catalog/${kind}/${encodeURIComponent(created.id)}`;
              },
              `${heading} ${String(body['name'])} created.`,
            )
          }
        />
      </section>
    );
  if (record === undefined) return <RecordLoading titleId="composed-title" title={heading} loadError={loadError} />;
  const members = membersOf(record, kind);
  return (
    <section aria-labelledby="composed-title">
      <BackToCatalog />
      <RecordHead
        titleId="composed-title"
        title={record.name}
        mayEdit={permissions.has(`${kind}:update`)}
        editing={editing}
        setEditing={setEditing}
        mayDelete={permissions.has(`${kind}:delete`)}
        what={`${k.one} ${record.name}`}
        onDelete={() =>
          change(async () => {
            await api('DELETE', path);
            window.location.hash = '#/catalog';
          }, `${heading} ${record.name} deleted.`)
        }
      >
        {k.one} {record.version} · changed {when(record.updated_at)}
      </RecordHead>
      {record.description ? <p>{record.description}</p> : null}
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {editing ? (
        <ComposedForm
          kind={kind}
          record={record}
          options={options ?? []}
          onClose={() => setEditing(false)}
          onSubmit={async (body) => {
            const done = await change(() => api('PUT', path, body), `${heading} ${String(body['name'])} saved.`);
            if (done) setEditing(false);
            return done;
          }}
        />
      ) : null}
      <h2>{kind === 'sequences' ? 'Steps' : 'Sequences'}</h2>
      <ol class="members-view">
        {members.map((m) => (
          <li key={`${m.order}-${refOf(m)}`}>
            <a href={`#/catalog/${kind === 'sequences' ? 'actions' : 'sequences'}/${encodeURIComponent(refOf(m))}`}>
              {nameIn(options, refOf(m))}
            </a>
            {m.version_requirement ? <span class="muted"> {m.version_requirement}</span> : null}
          </li>
        ))}
      </ol>
    </section>
  );
};
