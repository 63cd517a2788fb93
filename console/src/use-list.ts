// A list read from the API, the one way every page reads one (catalog, freezes, capacity, integrations, enrollment
// tokens), and a record's name out of such a list.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';

/**
 * A list endpoint's first 100 records (`{data}` envelope), read again by `reload`; nothing is asked when `path` is
 * undefined (the caller may not read it).
 */
export const useList = <T>(
  path: string | undefined,
): { rows: T[] | undefined; error: string | undefined; reload: () => Promise<void> } => {
  const [rows, setRows] = useState<T[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const reload = async () => {
    if (path === undefined) return;
    try {
      const answer = await api<{ data: T[] }>('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100`);
      setRows(answer.data);
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    void reload();
  }, [path]);
  return { rows, error, reload };
};

/** A name for an id out of a list, else the id (a record the caller cannot read, or one deleted meanwhile). */
export const nameIn = (rows: readonly { id: string; name: string }[] | undefined, id: string | null): string =>
  id === null ? '—' : (rows?.find((r) => r.id === id)?.name ?? id);
