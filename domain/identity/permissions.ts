// The 57 system permissions (`<resource>:<action>`) and the three system roles of decisions.md section 3.
// Permissions are fixed: they cannot be created, changed or deleted through the API.

const ACTIONS: Readonly<Record<string, readonly string[]>> = {
  deployments: ['read', 'create', 'cancel', 'redeploy'],
  pending_deployments: ['read', 'cancel'],
  targets: ['read', 'create', 'update', 'delete'],
  actions: ['read', 'create', 'update', 'delete'],
  sequences: ['read', 'create', 'update', 'delete'],
  solutions: ['read', 'create', 'update', 'delete'],
  environments: ['read', 'create', 'update', 'delete'],
  tenants: ['read', 'create', 'update', 'delete'],
  freezes: ['read', 'create', 'update', 'delete'],
  users: ['read', 'create', 'update', 'delete'],
  roles: ['read', 'create', 'update', 'delete'],
  api_keys: ['read', 'create', 'delete'],
  identity_providers: ['read', 'create', 'update', 'delete'],
  oauth_clients: ['read', 'create', 'update', 'delete'],
  analysis: ['read', 'manage'],
  encryption: ['read', 'verify'],
};

export type Permission = `${string}:${string}`;

export interface PermissionInfo {
  readonly name: Permission;
  readonly resource: string;
  readonly action: string;
  readonly description: string;
}

const describe = (resource: string, action: string): string => {
  const noun = resource.replace(/_/g, ' ');
  const verbs: Record<string, string> = {
    read: `View ${noun}`,
    create: `Create ${noun}`,
    update: `Change ${noun}`,
    delete: `Delete ${noun}`,
    cancel: `Cancel ${noun}`,
    redeploy: `Redeploy ${noun}`,
    manage: `Manage ${noun} requests and settings`,
    verify: `Verify the ${noun} key`,
  };
  return verbs[action] ?? `${action} ${noun}`;
};

export const PERMISSIONS: readonly PermissionInfo[] = Object.entries(ACTIONS).flatMap(([resource, actions]) =>
  actions.map((action) => ({
    name: `${resource}:${action}` as Permission,
    resource,
    action,
    description: describe(resource, action),
  })),
);

export const PERMISSION_NAMES: ReadonlySet<string> = new Set(PERMISSIONS.map((p) => p.name));

export const isPermission = (name: string): name is Permission => PERMISSION_NAMES.has(name);

const all = (resource: string) => (ACTIONS[resource] ?? []).map((action) => `${resource}:${action}` as Permission);
const read = (...resources: string[]) => resources.map((r) => `${r}:read` as Permission);

export interface SystemRole {
  /** Fixed ids, so system roles can be addressed like stored ones. */
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly permissions: readonly Permission[];
}

export const SYSTEM_ROLES: readonly SystemRole[] = [
  {
    id: '00000000-0000-4000-8000-000000000001',
    name: 'admin',
    description: 'Everything, in every tenant',
    permissions: PERMISSIONS.map((p) => p.name),
  },
  {
    id: '00000000-0000-4000-8000-000000000002',
    name: 'operator',
    description: 'Runs deployments and manages the catalog and targets',
    permissions: [
      ...all('deployments'),
      ...all('pending_deployments'),
      ...all('targets'),
      ...all('actions'),
      ...all('sequences'),
      ...all('solutions'),
      ...read('environments', 'tenants', 'freezes', 'analysis'),
      'freezes:create',
      ...all('api_keys'),
    ],
  },
  {
    id: '00000000-0000-4000-8000-000000000003',
    name: 'user',
    description: 'Reads everything deployments need and creates deployments',
    permissions: [
      ...read(
        'deployments',
        'pending_deployments',
        'targets',
        'actions',
        'sequences',
        'solutions',
        'environments',
        'freezes',
        'analysis',
      ),
      'deployments:create',
      ...all('api_keys'),
    ],
  },
];

export const systemRole = (name: string): SystemRole | undefined => SYSTEM_ROLES.find((r) => r.name === name);
