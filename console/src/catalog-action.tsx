// An action of the catalog (#/catalog/actions/<id>, #/catalog/actions/new), within the caller's permissions: its
// name and description (actions:update), delete (actions:delete), its versions read only with delete
// (actions:delete; the API refuses the last one), and a new version in the script editor (actions:create), starting
// from the latest. The API decides; its refusal shows.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { draftFrom, emptyDraft, versionBody, VersionFields, VersionView, type Version } from './catalog-version.js';
import { when } from './format.js';
import { BackToCatalog, RecordHead, RecordLoading } from './catalog-head.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface ActionDetail {
  readonly id: string;
  readonly short_id: string;
  readonly slug: string;
  readonly name: string;
  readonly description: string | null;
  readonly latest_version: string;
  readonly updated_at: string;
  readonly versions: readonly Version[];
}

const path = (id: string) => `/actions/${encodeURIComponent(id)}`;

export const NewAction = () => {
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [draft, setDraft] = useState(emptyDraft());
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<{ id: string }>('POST', '/actions', {
        slug: slug.trim(),
        name: name.trim(),
        ...(description.trim() === '' ? {} : { description: description.trim() }),
        version: versionBody(draft),
      });
      window.location.hash = `#/catalog/actions/${encodeURIComponent(created.id)}`;
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-action-title">
      <BackToCatalog />
      <h1 id="new-action-title">New action</h1>
      <form class="stack-form wide" onSubmit={(e) => void submit(e)}>
        <fieldset>
          <legend>Action</legend>
          <label>
            Name{' '}
            <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            Slug (lower-case letters, digits, dashes; fixed once created){' '}
            <input
              name="slug"
              required
              pattern="[a-z0-9][a-z0-9\-]{0,63}"
              value={slug}
              onInput={(e) => setSlug((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            Description{' '}
            <input
              name="description"
              value={description}
              onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
            />
          </label>
        </fieldset>
        <fieldset>
          <legend>First version</legend>
          <VersionFields prefix="new-action" draft={draft} onChange={setDraft} />
        </fieldset>
        <ErrorLine message={error} />
        <button type="submit" disabled={busy}>
          Create action
        </button>
      </form>
    </section>
  );
};

/** The action's name and description, edited in place. */
const ActionEditForm = ({
  action,
  save,
  close,
}: {
  action: ActionDetail;
  save: (event: SubmitEvent) => unknown;
  close: () => void;
}) => (
  <form class="stack-form" aria-label={`Edit action ${action.name}`} onSubmit={(e) => void save(e)}>
    <label>
      Name <input name="name" required defaultValue={action.name} />
    </label>
    <label>
      Description <input name="description" defaultValue={action.description ?? ''} />
    </label>
    <div class="buttons">
      <button type="submit">Save action</button>
      <button type="button" onClick={close}>
        Close
      </button>
    </div>
  </form>
);

export const ActionPage = ({ id, permissions }: { id: string; permissions: ReadonlySet<string> }) => {
  const [action, setAction] = useState<ActionDetail | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<ReturnType<typeof emptyDraft> | undefined>();
  const load = () =>
    api<ActionDetail>('GET', path(id)).then(
      (a) => {
        setAction(a);
        setLoadError(undefined);
      },
      (e: unknown) => setLoadError(errorText(e)),
    );
  const { error, notice, change } = useChanges(load);
  useEffect(() => {
    void load();
  }, [id]);

  if (action === undefined) return <RecordLoading titleId="action-title" title="Action" loadError={loadError} />;

  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('name')).trim();
    const description = String(form.get('description')).trim();
    const done = await change(
      () => api('PUT', path(action.id), { name, description: description === '' ? null : description }),
      `Action ${name} saved.`,
    );
    if (done) setEditing(false);
  };
  const addVersion = async (event: SubmitEvent) => {
    event.preventDefault();
    if (draft === undefined) return;
    const body = versionBody(draft);
    const done = await change(
      () => api('POST', `${path(action.id)}/versions`, body),
      `Version ${body.version} of ${action.name} created.`,
    );
    if (done) setDraft(undefined);
  };
  const latest = action.versions[0];
  return (
    <section aria-labelledby="action-title">
      <BackToCatalog />
      <RecordHead
        titleId="action-title"
        title={action.name}
        mayEdit={permissions.has('actions:update')}
        editing={editing}
        setEditing={setEditing}
        mayDelete={permissions.has('actions:delete')}
        what={`action ${action.name}`}
        onDelete={() =>
          change(async () => {
            await api('DELETE', path(action.id));
            window.location.hash = '#/catalog';
          }, `Action ${action.name} deleted.`)
        }
      >
        {action.slug} · latest {action.latest_version} · changed {when(action.updated_at)}
      </RecordHead>
      {action.description ? <p>{action.description}</p> : null}
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {editing ? <ActionEditForm action={action} save={save} close={() => setEditing(false)} /> : null}
      <header class="page-head">
        <h2>Versions</h2>
        {permissions.has('actions:create') && draft === undefined ? (
          <span class="actions">
            <button type="button" onClick={() => setDraft(latest === undefined ? emptyDraft() : draftFrom(latest))}>
              New version
            </button>
          </span>
        ) : null}
      </header>
      {draft === undefined ? null : (
        <form class="stack-form wide" aria-label="New version" onSubmit={(e) => void addVersion(e)}>
          <fieldset>
            <legend>New version{latest === undefined ? '' : `, starting from ${latest.version}`}</legend>
            <VersionFields prefix="new-version" draft={draft} onChange={setDraft} />
            <div class="buttons">
              <button type="submit">Create version</button>
              <button type="button" onClick={() => setDraft(undefined)}>
                Discard
              </button>
            </div>
          </fieldset>
        </form>
      )}
      {action.versions.map((v) => (
        <VersionView key={v.id} version={v}>
          {permissions.has('actions:delete') && action.versions.length > 1 ? (
            <p>
              <ConfirmButton
                label="Delete"
                what={`version ${v.version}`}
                onConfirm={() =>
                  change(
                    () => api('DELETE', `${path(action.id)}/versions/${encodeURIComponent(v.version)}`),
                    `Version ${v.version} deleted.`,
                  )
                }
              />
            </p>
          ) : null}
        </VersionView>
      ))}
    </section>
  );
};
