// Pages loaded when first opened: the app's first script holds the daily pages (deployments, a deployment, a new
// deployment, the queue, targets); the catalog, freezes, capacity, integrations, administration and the profile are
// chunks of their own (esbuild's splitting, named by their contents like the entry), fetched on the first visit.
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorLine } from './widgets.js';

export const lazyPage = <P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> => {
  let loaded: Promise<ComponentType<P>> | undefined;
  return (props: P) => {
    const [Page, setPage] = useState<ComponentType<P> | undefined>();
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      loaded ??= load();
      loaded.then(
        (component) => setPage(() => component),
        () => {
          loaded = undefined;
          setFailed(true);
        },
      );
    }, []);
    if (failed) return <ErrorLine message="This page could not be loaded: reload to try again." />;
    return Page === undefined ? <p>Loading…</p> : <Page {...props} />;
  };
};
