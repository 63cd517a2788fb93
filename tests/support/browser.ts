// What a browser does in a single sign-on, over plain HTTP: a cookie jar (name, value, path; Max-Age=0 deletes),
// redirects followed one by one (each hop visible to the test), and every answer of the service checked against the
// OpenAPI document like apiClient's.
import { assertConforms } from './openapi-conformance.js';

export interface Hop {
  readonly url: string;
  readonly status: number;
  readonly location: string | undefined;
  readonly setCookies: readonly string[];
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly text: string;
}

interface Cookie {
  readonly value: string;
  readonly path: string;
}

export const browser = (serviceOrigin: () => string) => {
  const jars = new Map<string, Map<string, Cookie>>(); // origin -> name -> cookie

  const jarOf = (origin: string) => {
    let jar = jars.get(origin);
    if (jar === undefined) jars.set(origin, (jar = new Map()));
    return jar;
  };

  /** The service is reached as localhost or 127.0.0.1: one jar for both, as one origin. */
  const originOf = (url: URL) => (url.port === new URL(serviceOrigin()).port ? 'service' : url.origin);

  const store = (url: URL, setCookies: readonly string[]) => {
    const jar = jarOf(originOf(url));
    for (const header of setCookies) {
      const [pair, ...attributes] = header.split(';').map((p) => p.trim());
      const [name, ...rest] = (pair ?? '').split('=');
      const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      const maxAge = attributes.find((a) => a.toLowerCase().startsWith('max-age='));
      if (maxAge !== undefined && Number(maxAge.slice(8)) <= 0) jar.delete(name!);
      else jar.set(name!, { value: rest.join('='), path });
    }
  };

  const cookieHeader = (url: URL): string =>
    [...jarOf(originOf(url)).entries()]
      .filter(([, c]) => url.pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');

  /** One request, no redirect followed; cookies sent and stored. */
  const visit = async (
    rawUrl: string,
    init: { method?: string; form?: Readonly<Record<string, string>> } = {},
  ): Promise<Hop> => {
    const url = new URL(rawUrl, serviceOrigin());
    const cookie = cookieHeader(url);
    const response = await fetch(url, {
      method: init.method ?? (init.form === undefined ? 'GET' : 'POST'),
      redirect: 'manual',
      headers: {
        ...(cookie === '' ? {} : { cookie }),
        ...(init.form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(init.form === undefined ? {} : { body: new URLSearchParams(init.form) }),
    });
    const text = await response.text();
    const setCookies = response.headers.getSetCookie();
    store(url, setCookies);
    const contentType = response.headers.get('content-type');
    if (originOf(url) === 'service')
      assertConforms({
        method: init.method ?? (init.form === undefined ? 'GET' : 'POST'),
        path: url.pathname + url.search,
        status: response.status,
        contentType,
        text,
      });
    return {
      url: url.toString(),
      status: response.status,
      location: response.headers.get('location') ?? undefined,
      setCookies,
      json: /json/i.test(contentType ?? '') && text !== '' ? JSON.parse(text) : undefined,
      text,
    };
  };

  /** Follows redirects from `url` until an answer that is not one (at most 10 hops); every hop. */
  const navigate = async (url: string): Promise<Hop[]> => {
    const hops: Hop[] = [];
    let next: string | undefined = url;
    while (next !== undefined && hops.length < 10) {
      const hop = await visit(next);
      hops.push(hop);
      next =
        hop.status >= 300 && hop.status < 400 && hop.location !== undefined
          ? new URL(hop.location, hop.url).toString()
          : undefined;
    }
    return hops;
  };

  const cookie = (name: string): string | undefined => jarOf('service').get(name)?.value;

  return { visit, navigate, cookie, clear: () => jars.clear() };
};
