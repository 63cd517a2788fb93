// The administration area, within the caller's permissions: `#/admin` lists the sections the caller may see and
// `#/admin/<section>` shows one, with the sections as a sub-navigation above it. A section is one entry of
// ADMIN_SECTIONS (its path, its label, who sees it, what it shows); the header's Administration link shows when any
// section is visible.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type User } from './api.js';
import { ApiKeys } from './admin-api-keys.js';
import { ADMIN_READ, type AdminPath } from './admin-visibility.js';
import { OAuthClients } from './admin-oauth.js';
import { IdentityProviders } from './sso/providers.js';
import { Roles } from './admin-roles.js';
import { Environments, Tenants } from './admin-tenancy.js';
import { Users } from './admin-users.js';
import { ErrorLine } from './widgets.js';

export interface AdminContext {
  readonly user: User;
  readonly permissions: ReadonlySet<string>;
}

export interface AdminSection {
  /** `#/admin/<path>` */
  readonly path: AdminPath;
  readonly label: string;
  /** One line on the `#/admin` overview. */
  readonly summary: string;
  readonly visible: (permissions: ReadonlySet<string>) => boolean;
  readonly render: (context: AdminContext) => ComponentChildren;
}

/** Users with the role names to pick from, when the caller may read the roles (else a comma-separated field). */
const UsersSection = ({ permissions }: AdminContext) => {
  const [roleNames, setRoleNames] = useState<string[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (permissions.has('roles:read'))
      void api<{ data: { name: string }[] }>('GET', '/admin/roles?limit=100').then(
        (answer) => setRoleNames(answer.data.map((r) => r.name)),
        (e: unknown) => setError(errorText(e)),
      );
  }, []);
  return (
    <>
      <ErrorLine message={error} />
      <Users permissions={permissions} roleNames={roleNames} />
    </>
  );
};

export const ADMIN_SECTIONS: AdminSection[] = [
  {
    path: 'api-keys',
    label: 'API keys',
    summary: 'Your own keys for scripts and CI, with the permissions and expiry you choose.',
    visible: (p) => p.has(ADMIN_READ['api-keys']),
    render: ({ user, permissions }) => <ApiKeys user={user} permissions={permissions} />,
  },
  {
    path: 'users',
    label: 'Users',
    summary: 'Accounts, their status and roles.',
    visible: (p) => p.has(ADMIN_READ['users']),
    render: (context) => <UsersSection {...context} />,
  },
  {
    path: 'roles',
    label: 'Roles',
    summary: 'Roles and the permissions they grant.',
    visible: (p) => p.has(ADMIN_READ['roles']),
    render: ({ permissions }) => <Roles permissions={permissions} onRoles={() => undefined} />,
  },
  {
    path: 'tenants',
    label: 'Tenants',
    summary: 'The teams or customers records belong to.',
    visible: (p) => p.has(ADMIN_READ['tenants']),
    render: ({ permissions }) => <Tenants permissions={permissions} />,
  },
  {
    path: 'environments',
    label: 'Environments',
    summary: 'Where targets run: production, staging and so on, global or per tenant.',
    visible: (p) => p.has(ADMIN_READ['environments']),
    render: ({ permissions }) => <Environments permissions={permissions} />,
  },
  {
    path: 'identity-providers',
    label: 'Identity providers',
    summary: 'Single sign-on with your company’s OpenID Connect provider, and which groups get which roles.',
    visible: (p) => p.has(ADMIN_READ['identity-providers']),
    render: ({ permissions }) => <IdentityProviders permissions={permissions} />,
  },
  {
    path: 'oauth-clients',
    label: 'OAuth clients',
    summary: 'Applications and pipelines that get tokens through OAuth 2.0.',
    visible: (p) => p.has(ADMIN_READ['oauth-clients']),
    render: ({ user, permissions }) => <OAuthClients user={user} permissions={permissions} />,
  },
];

export const visibleAdminSections = (permissions: ReadonlySet<string>): AdminSection[] =>
  ADMIN_SECTIONS.filter((s) => s.visible(permissions));

export const Admin = ({
  user,
  permissions,
  section,
}: {
  user: User;
  permissions: ReadonlySet<string>;
  section: string | undefined;
}) => {
  const sections = visibleAdminSections(permissions);
  const current = sections.find((s) => s.path === section);
  return (
    <section aria-labelledby="admin-title" class="admin">
      <h1 id="admin-title">Administration</h1>
      <nav aria-label="Administration" class="subnav">
        {sections.map((s) => (
          <a key={s.path} href={`#/admin/${s.path}`} aria-current={s === current ? 'page' : undefined}>
            {s.label}
          </a>
        ))}
      </nav>
      {current !== undefined ? (
        <div key={current.path}>{current.render({ user, permissions })}</div>
      ) : section !== undefined ? (
        <p role="alert" class="error">
          There is no section “{section}” here, or it needs a permission you do not hold.
        </p>
      ) : sections.length === 0 ? (
        <p>Nothing here needs your attention: administration needs permissions you do not hold.</p>
      ) : (
        <ul class="plain sections">
          {sections.map((s) => (
            <li key={s.path}>
              <a href={`#/admin/${s.path}`}>{s.label}</a> <span class="muted">{s.summary}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
};
