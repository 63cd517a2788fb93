// The catalog's routes, apart from its pages so that the app's first script holds only this (the pages load when
// first opened, see main.tsx).

export type CatalogRoute = { kind: 'actions' | 'sequences' | 'solutions'; id: string } | undefined;

/** `#/catalog/<kind>/<id>` as a route, `undefined` for the catalog itself. */
export const catalogRouteOf = (hash: string): CatalogRoute => {
  const match = /^#\/catalog\/(actions|sequences|solutions)\/([^/]+)$/.exec(hash);
  return match === null
    ? undefined
    : { kind: match[1] as 'actions' | 'sequences' | 'solutions', id: decodeURIComponent(match[2]!) };
};
