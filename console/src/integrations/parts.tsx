// Pieces the two integration pages (deploy triggers, webhooks) share: their sub-navigation, the row whose details or
// editor is open, a row's write buttons (edit, enable / disable, new secret, delete), and an editor's Save and Close.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ConfirmButton } from '../widgets.js';

/** The two integration pages, each shown with the permission that reads it. */
export const IntegrationsNav = ({
  permissions,
  current,
}: {
  permissions: ReadonlySet<string>;
  current: 'triggers' | 'webhooks';
}) => (
  <nav class="subnav" aria-label="Integrations">
    {permissions.has('deployments:read') ? (
      <a href="#/triggers" aria-current={current === 'triggers' ? 'page' : undefined}>
        Deploy triggers
      </a>
    ) : null}
    {permissions.has('tenants:read') ? (
      <a href="#/webhooks" aria-current={current === 'webhooks' ? 'page' : undefined}>
        Webhooks
      </a>
    ) : null}
  </nav>
);

/** Which row has what open below it (`mode`: its details, its log, its editor); a second press closes it. */
export const useOpenRow = <Mode extends string>() => {
  const [open, setOpen] = useState<{ id: string; mode: Mode } | undefined>();
  const isOpen = (id: string, mode: Mode) => open?.id === id && open.mode === mode;
  const toggle = (id: string, mode: Mode) => setOpen(isOpen(id, mode) ? undefined : { id, mode });
  return { open, setOpen, isOpen, toggle, close: () => setOpen(undefined) };
};

/** A row's write buttons, after `children` (a row's own, such as Send test). `name` names the record. */
export const WriteButtons = ({
  name,
  enabled,
  editing,
  onEdit,
  onEnable,
  onRotate,
  onDelete,
  children,
}: {
  name: string;
  enabled: boolean;
  editing: boolean;
  onEdit: () => void;
  onEnable: () => void;
  onRotate: () => void;
  onDelete: () => Promise<unknown>;
  children?: ComponentChildren;
}) => (
  <>
    {children}
    <button type="button" aria-label={`Edit ${name}`} aria-expanded={editing} onClick={onEdit}>
      Edit
    </button>
    <button type="button" aria-label={`${enabled ? 'Disable' : 'Enable'} ${name}`} onClick={onEnable}>
      {enabled ? 'Disable' : 'Enable'}
    </button>
    <button type="button" aria-label={`New secret for ${name}`} onClick={onRotate}>
      New secret
    </button>
    <ConfirmButton label="Delete" what={name} onConfirm={onDelete} />
  </>
);

/** An editor's buttons. */
export const SaveOrClose = ({ onClose }: { onClose: () => void }) => (
  <div class="buttons">
    <button type="submit">Save</button>
    <button type="button" onClick={onClose}>
      Close
    </button>
  </div>
);
