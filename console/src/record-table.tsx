// An administration list whose rows are edited in place: a table with its columns and, per row, an edit button that
// opens the row's form below it (Save, Close) and a delete confirmed in the page, each shown to who may use it.
import { Fragment, type ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ConfirmButton } from './widgets.js';

export interface Column<R> {
  readonly heading: string;
  readonly cell: (record: R) => ComponentChildren;
}

/** A row's form: its fields, Save, and Close. */
export const InlineEditForm = ({
  label,
  onSubmit,
  onClose,
  children,
}: {
  label: string;
  onSubmit: (event: SubmitEvent) => void;
  onClose: () => void;
  children: ComponentChildren;
}) => (
  <form class="inline-form" aria-label={label} onSubmit={onSubmit}>
    {children}
    <button type="submit">Save</button>
    <button type="button" onClick={onClose}>
      Close
    </button>
  </form>
);

export const RecordTable = <R extends { id: string }>({
  records,
  kind,
  columns,
  mayUpdate,
  mayDelete,
  edit,
  what,
  fields,
  onSave,
  onDelete,
}: {
  records: readonly R[];
  /** The table's class and its rows' `data-<kind>-id`. */
  kind: string;
  columns: readonly Column<R>[];
  mayUpdate: boolean;
  mayDelete: boolean;
  /** The edit button's word: "Edit", "Rename". */
  edit: string;
  /** The record in the buttons' and form's names: "tenant team-a". */
  what: (record: R) => string;
  fields: (record: R) => ComponentChildren;
  /** Saves the row's form; true when it worked (the form closes). */
  onSave: (form: FormData, record: R) => Promise<boolean>;
  onDelete: (record: R) => Promise<unknown>;
}) => {
  const [editing, setEditing] = useState<string | undefined>();
  const save = async (event: SubmitEvent, record: R) => {
    event.preventDefault();
    if (await onSave(new FormData(event.currentTarget as HTMLFormElement), record)) setEditing(undefined);
  };
  const actions = mayUpdate || mayDelete;
  return (
    <div class="table-scroll">
      <table class={`list ${kind}s`}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.heading}>
                {c.heading}
              </th>
            ))}
            {actions ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {records.map((r) => (
            <Fragment key={r.id}>
              <tr {...{ [`data-${kind}-id`]: r.id }}>
                {columns.map((c) => c.cell(r))}
                {actions ? (
                  <td class="row-actions">
                    {mayUpdate ? (
                      <button
                        type="button"
                        aria-label={`${edit} ${what(r)}`}
                        aria-expanded={editing === r.id}
                        onClick={() => setEditing(editing === r.id ? undefined : r.id)}
                      >
                        {edit}
                      </button>
                    ) : null}
                    {mayDelete ? <ConfirmButton label="Delete" what={what(r)} onConfirm={() => onDelete(r)} /> : null}
                  </td>
                ) : null}
              </tr>
              {editing === r.id ? (
                <tr class="editor">
                  <td colSpan={columns.length + 1}>
                    <InlineEditForm
                      label={`${edit} ${what(r)}`}
                      onSubmit={(e) => void save(e, r)}
                      onClose={() => setEditing(undefined)}
                    >
                      {fields(r)}
                    </InlineEditForm>
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
};
