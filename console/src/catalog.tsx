// The catalog: actions, sequences and solutions, each kind shown only with its read permission, each record a link
// to its page (catalog-action.tsx, catalog-compose.tsx), and "New …" only with the create permission. Routes:
// #/catalog, #/catalog/actions/<id|new>, #/catalog/sequences/<id|new>, #/catalog/solutions/<id|new>.
import { ActionPage, NewAction } from './catalog-action.js';
import { ComposedPage, memberLine, type Composed, type ComposedKind } from './catalog-compose.js';
import { useList } from './use-list.js';
import type { CatalogRoute } from './catalog-route.js';
import { ErrorLine } from './widgets.js';

interface Action {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly description: string | null;
  readonly latest_version: string | null;
}

const ComposedList = ({
  kind,
  rows,
  names,
  permissions,
}: {
  kind: ComposedKind;
  rows: readonly Composed[] | undefined;
  names: readonly { id: string; name: string }[] | undefined;
  permissions: ReadonlySet<string>;
}) => (
  <>
    <header class="page-head">
      <h2 id={`${kind}-title`}>{kind === 'sequences' ? 'Sequences' : 'Solutions'}</h2>
      {permissions.has(`${kind}:create`) ? (
        <a class="button" href={`#/catalog/${kind}/new`}>
          New {kind === 'sequences' ? 'sequence' : 'solution'}
        </a>
      ) : null}
    </header>
    <div class="table-scroll">
      <table class="list whole-words" aria-labelledby={`${kind}-title`}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Version</th>
            <th scope="col">{kind === 'sequences' ? 'Steps' : 'Sequences'}</th>
          </tr>
        </thead>
        <tbody>
          {(rows ?? []).map((r) => (
            <tr key={r.id} data-id={r.id}>
              <td>
                <a href={`#/catalog/${kind}/${encodeURIComponent(r.id)}`}>{r.name}</a>
              </td>
              <td>{r.version}</td>
              <td>{memberLine(r, kind, names)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
    {rows?.length === 0 ? <p class="muted">None yet.</p> : null}
  </>
);

const CatalogList = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const actions = useList<Action>('/actions');
  const sequences = useList<Composed>(permissions.has('sequences:read') ? '/sequences' : undefined);
  const solutions = useList<Composed>(permissions.has('solutions:read') ? '/solutions' : undefined);
  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">Catalog</h1>
      <ErrorLine message={actions.error ?? sequences.error ?? solutions.error} />
      <header class="page-head">
        <h2 id="actions-title">Actions</h2>
        {permissions.has('actions:create') ? (
          <a class="button" href="#/catalog/actions/new">
            New action
          </a>
        ) : null}
      </header>
      <div class="table-scroll">
        <table class="list whole-words" aria-labelledby="actions-title">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Slug</th>
              <th scope="col">Latest</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {(actions.rows ?? []).map((a) => (
              <tr key={a.id} data-action-id={a.id}>
                <td>
                  <a href={`#/catalog/actions/${encodeURIComponent(a.id)}`}>{a.name}</a>
                </td>
                <td>{a.slug}</td>
                <td>{a.latest_version ?? '—'}</td>
                <td>{a.description ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {actions.rows?.length === 0 ? <p class="muted">None yet.</p> : null}
      {permissions.has('sequences:read') ? (
        <ComposedList kind="sequences" rows={sequences.rows} names={actions.rows} permissions={permissions} />
      ) : null}
      {permissions.has('solutions:read') ? (
        <ComposedList kind="solutions" rows={solutions.rows} names={sequences.rows} permissions={permissions} />
      ) : null}
    </section>
  );
};

export const Catalog = ({ route, permissions }: { route: CatalogRoute; permissions: ReadonlySet<string> }) =>
  route === undefined ? (
    <CatalogList permissions={permissions} />
  ) : route.kind === 'actions' ? (
    route.id === 'new' ? (
      <NewAction />
    ) : (
      <ActionPage id={route.id} permissions={permissions} />
    )
  ) : (
    <ComposedPage kind={route.kind} id={route.id} permissions={permissions} />
  );
