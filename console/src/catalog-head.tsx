// The head shared by the catalog's record pages (an action, a sequence, a solution): the link back to the catalog,
// the page while its record loads, and the title with what it is, Edit (its form toggled by the page) and a
// confirmed Delete when the caller may.
import type { ComponentChildren } from 'preact';
import { ConfirmButton, ErrorLine } from './widgets.js';

export const BackToCatalog = () => (
  <p>
    <a href="#/catalog">Catalog</a>
  </p>
);

/** The page before its record came: "Loading…", or why it did not come. */
export const RecordLoading = ({
  titleId,
  title,
  loadError,
}: {
  titleId: string;
  title: string;
  loadError: string | undefined;
}) => (
  <section aria-labelledby={titleId}>
    <BackToCatalog />
    <h1 id={titleId}>{title}</h1>
    {loadError === undefined ? <p>Loading…</p> : <ErrorLine message={loadError} />}
  </section>
);

/** The record's title, what it is (`children`), then Edit and Delete as the caller may. */
export const RecordHead = ({
  titleId,
  title,
  children,
  mayEdit,
  editing,
  setEditing,
  mayDelete,
  what,
  onDelete,
}: {
  titleId: string;
  title: string;
  children: ComponentChildren;
  mayEdit: boolean;
  editing: boolean;
  setEditing: (editing: boolean) => void;
  mayDelete: boolean;
  what: string;
  onDelete: () => Promise<unknown>;
}) => (
  <header class="page-head">
    <h1 id={titleId}>{title}</h1>
    <span class="muted">{children}</span>
    <span class="actions">
      {mayEdit ? (
        <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit
        </button>
      ) : null}
      {mayDelete ? <ConfirmButton label="Delete" what={what} onConfirm={onDelete} /> : null}
    </span>
  </header>
);
