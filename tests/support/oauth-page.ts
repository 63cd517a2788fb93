// Drives the authorization page (GET /oauth/authorize, POST /oauth/consent) over plain HTTP, the way a browser
// without JavaScript would: it keeps the CSRF cookie, reads the hidden fields of each form and posts them back.

export interface PageAnswer {
  readonly status: number;
  readonly location: string | null;
  readonly html: string;
  readonly headers: Headers;
  /** The hidden fields of the page's form. */
  readonly hidden: Record<string, string>;
}

const unescape = (text: string): string =>
  text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!,
  );

/** The hidden fields of a page's form, unescaped. */
export const hiddenFields = (html: string): Record<string, string> => {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[unescape(match[1]!)] = unescape(match[2]!);
  return fields;
};

/** One browser session at the page: its cookie jar is the CSRF cookie. */
export const pageSession = (baseUrl: () => string) => {
  let cookie: string | undefined;
  const remember = (headers: Headers) => {
    for (const set of headers.getSetCookie()) {
      const match = /^deployer_oauth_csrf=([^;]*)/.exec(set);
      if (match !== null) cookie = match[1] === '' ? undefined : match[1];
    }
  };
  const answer = async (response: Response): Promise<PageAnswer> => {
    remember(response.headers);
    const html = await response.text();
    return {
      status: response.status,
      location: response.headers.get('location'),
      html,
      headers: response.headers,
      hidden: hiddenFields(html),
    };
  };
  return {
    get cookie() {
      return cookie;
    },
    set cookie(value: string | undefined) {
      cookie = value;
    },
    open: async (query: Record<string, string>): Promise<PageAnswer> =>
      answer(await fetch(`${baseUrl()}/oauth/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' })),
    post: async (fields: Record<string, string>, headers: Record<string, string> = {}): Promise<PageAnswer> =>
      answer(
        await fetch(`${baseUrl()}/oauth/consent`, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            ...(cookie === undefined ? {} : { cookie: `deployer_oauth_csrf=${cookie}` }),
            ...headers,
          },
          body: new URLSearchParams(fields),
        }),
      ),
  };
};
