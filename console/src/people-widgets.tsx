// Pieces of the administration and profile pages: permission names grouped by resource. (Secrets shown once are
// copy-widgets.tsx's SecretOnce; deletes confirm in the page with widgets.tsx's ConfirmButton.)
/** The order resources are listed in (the spec's permission table); others follow by name. */
const RESOURCE_ORDER = [
  'deployments',
  'pending_deployments',
  'targets',
  'actions',
  'sequences',
  'solutions',
  'environments',
  'tenants',
  'freezes',
  'users',
  'roles',
  'api_keys',
  'identity_providers',
  'oauth_clients',
  'analysis',
  'encryption',
];

/** Permission names (`<resource>:<action>`) grouped by resource, in the spec's order. */
export const groupPermissions = (names: readonly string[]): { resource: string; permissions: string[] }[] => {
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const resource = name.split(':')[0] ?? name;
    groups.set(resource, [...(groups.get(resource) ?? []), name]);
  }
  const rank = (r: string) => {
    const i = RESOURCE_ORDER.indexOf(r);
    return i === -1 ? RESOURCE_ORDER.length : i;
  };
  return [...groups.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([resource, permissions]) => ({ resource, permissions }));
};

const LABELS: Readonly<Record<string, string>> = { api_keys: 'API keys', oauth_clients: 'OAuth clients' };

/** A resource name as a heading: `pending_deployments` -> `Pending deployments`, `api_keys` -> `API keys`. */
export const resourceLabel = (resource: string): string => {
  const known = LABELS[resource];
  if (known !== undefined) return known;
  const words = resource.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};
