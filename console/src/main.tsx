// The console: a small Preact app over the public API only (whatever it does, a script can do). Routes live in
// the URL's hash (#/deployments, #/deployments/<id>), so the server serves one page.
import { render } from 'preact';
import './console.css';
import { useEffect, useState } from 'preact/hooks';
import { logout, refresh, setSignedOutHandler, type User } from './api.js';
import { anyAdminSection } from './admin-visibility.js';
import { catalogRouteOf, type CatalogRoute } from './catalog-route.js';
import { Deployment } from './deployment/page.js';
import { Deployments } from './deployments.js';
import { lazyPage } from './lazy.js';
import { NewDeployment } from './new-deployment/page.js';
import { Queue } from './queue.js';
import { SignIn } from './sign-in.js';
import { Targets } from './targets.js';

const Admin = lazyPage(() => import('./admin.js').then((m) => m.Admin));
const Capacity = lazyPage(() => import('./capacity.js').then((m) => m.Capacity));
const Catalog = lazyPage(() => import('./catalog.js').then((m) => m.Catalog));
const Freezes = lazyPage(() => import('./freezes.js').then((m) => m.Freezes));
const Profile = lazyPage(() => import('./profile.js').then((m) => m.Profile));
const Triggers = lazyPage(() => import('./integrations/triggers.js').then((m) => m.Triggers));
const Webhooks = lazyPage(() => import('./integrations/webhooks.js').then((m) => m.Webhooks));

type Route =
  | { page: 'deployments' | 'new' | 'queue' | 'targets' | 'profile' | 'triggers' | 'webhooks' | 'freezes' | 'capacity' }
  | { page: 'deployment'; id: string }
  | { page: 'catalog'; sub: CatalogRoute }
  | { page: 'admin'; section?: string };

const routeOf = (hash: string): Route => {
  const match = /^#\/deployments\/([^/]+)$/.exec(hash);
  if (match !== null && match[1] !== 'new') return { page: 'deployment', id: decodeURIComponent(match[1]!) };
  if (hash === '#/deployments/new') return { page: 'new' };
  if (hash === '#/queue') return { page: 'queue' };
  if (hash === '#/targets') return { page: 'targets' };
  if (hash === '#/catalog' || hash.startsWith('#/catalog/')) return { page: 'catalog', sub: catalogRouteOf(hash) };
  if (hash === '#/admin') return { page: 'admin' };
  const admin = /^#\/admin\/([^/]+)$/.exec(hash);
  if (admin !== null) return { page: 'admin', section: decodeURIComponent(admin[1]!) };
  if (hash === '#/profile') return { page: 'profile' };
  if (hash === '#/triggers') return { page: 'triggers' };
  if (hash === '#/webhooks') return { page: 'webhooks' };
  if (hash === '#/freezes') return { page: 'freezes' };
  if (hash === '#/capacity') return { page: 'capacity' };
  return { page: 'deployments' };
};

/**
 * A sign-in through a provider not trusted for 2FA comes back with `#requires_2fa=true&pending_token=...`: the
 * token is taken out of the URL at once (out of the history too) and the sign-in form asks for the code.
 */
const pendingTwoFactor = (): string | undefined => {
  const params = new URLSearchParams(window.location.hash.slice(1));
  const token = params.get('pending_token');
  if (params.get('requires_2fa') !== 'true' || token === null) return undefined;
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
  return token;
};

/** Used once: after a sign-in, a later sign-in form starts afresh. */
let fromProvider = pendingTwoFactor();

const App = () => {
  const [user, setUser] = useState<User | null | undefined>(fromProvider === undefined ? undefined : null);
  const [route, setRoute] = useState(routeOf(window.location.hash));

  useEffect(() => {
    setSignedOutHandler(() => setUser(null));
    if (fromProvider === undefined)
      refresh().then(
        (u) => setUser(u ?? null),
        () => setUser(null),
      );
    const onHash = () => setRoute(routeOf(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  if (user === undefined) return <p>Loading…</p>;
  if (user === null)
    return (
      <SignIn
        onSignedIn={(u) => {
          fromProvider = undefined;
          setUser(u);
        }}
        pendingToken={fromProvider}
      />
    );
  const permissions = new Set(user.permissions);
  return (
    <>
      <header class="top">
        <a href="#/deployments" class="brand">
          Deployer
        </a>
        <nav aria-label="Main">
          <a href="#/deployments" aria-current={route.page.startsWith('deployment') ? 'page' : undefined}>
            Deployments
          </a>
          {permissions.has('deployments:create') ? (
            <a href="#/deployments/new" aria-current={route.page === 'new' ? 'page' : undefined}>
              New deployment
            </a>
          ) : null}
          {permissions.has('pending_deployments:read') ? (
            <a href="#/queue" aria-current={route.page === 'queue' ? 'page' : undefined}>
              Queue
            </a>
          ) : null}
          {permissions.has('targets:read') ? (
            <a href="#/targets" aria-current={route.page === 'targets' ? 'page' : undefined}>
              Targets
            </a>
          ) : null}
          {permissions.has('actions:read') ? (
            <a href="#/catalog" aria-current={route.page === 'catalog' ? 'page' : undefined}>
              Catalog
            </a>
          ) : null}
          {permissions.has('freezes:read') ? (
            <a href="#/freezes" aria-current={route.page === 'freezes' ? 'page' : undefined}>
              Freezes
            </a>
          ) : null}
          {permissions.has('deployments:read') || permissions.has('tenants:read') ? (
            <a
              href={permissions.has('deployments:read') ? '#/triggers' : '#/webhooks'}
              aria-current={route.page === 'triggers' || route.page === 'webhooks' ? 'page' : undefined}
            >
              Integrations
            </a>
          ) : null}
          {anyAdminSection(permissions) ? (
            <a href="#/admin" aria-current={route.page === 'admin' ? 'page' : undefined}>
              Administration
            </a>
          ) : null}
        </nav>
        <a
          href="#/profile"
          class="who"
          aria-current={route.page === 'profile' ? 'page' : undefined}
          title="Your profile: password, two-factor, sessions"
        >
          {user.display_name ?? user.email}
        </a>
        <button
          type="button"
          onClick={() => {
            void logout().then(() => setUser(null));
          }}
        >
          Sign out
        </button>
      </header>
      {route.page === 'deployment' ? (
        <Deployment id={route.id} permissions={permissions} />
      ) : route.page === 'new' ? (
        <NewDeployment user={user} />
      ) : route.page === 'queue' ? (
        <Queue permissions={permissions} />
      ) : route.page === 'targets' ? (
        <Targets permissions={permissions} />
      ) : route.page === 'catalog' ? (
        <Catalog route={route.sub} permissions={permissions} />
      ) : route.page === 'admin' ? (
        <Admin user={user} permissions={permissions} section={route.section} />
      ) : route.page === 'profile' ? (
        <Profile onSignedOut={() => setUser(null)} />
      ) : route.page === 'triggers' ? (
        <Triggers permissions={permissions} />
      ) : route.page === 'webhooks' ? (
        <Webhooks permissions={permissions} />
      ) : route.page === 'freezes' ? (
        <Freezes permissions={permissions} />
      ) : route.page === 'capacity' ? (
        <Capacity user={user} />
      ) : (
        <Deployments />
      )}
    </>
  );
};

render(<App />, document.getElementById('app')!);
