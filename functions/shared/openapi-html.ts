// The OpenAPI document as one self-contained HTML page (GET /api/v1/docs): no script, no CDN, no external font,
// only text, so it renders the same offline and under a strict Content-Security-Policy. Every text of the
// document is escaped: descriptions and examples are data, never markup.

type JsonObject = Record<string, unknown>;

const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const pretty = (value: unknown): string => escape(JSON.stringify(value, null, 2) ?? '');

const schemaBlock = (content: unknown): string => {
  const entries = Object.entries((content ?? {}) as Record<string, { schema?: unknown }>);
  return entries
    .map(
      ([type, media]) =>
        `<div class="media">${escape(type)}</div>${media.schema === undefined ? '' : `<details><summary>schema</summary><pre>${pretty(media.schema)}</pre></details>`}`,
    )
    .join('');
};

const operationHtml = (method: string, path: string, op: JsonObject): string => {
  const id = escape(String(op['operationId'] ?? `${method}-${path}`));
  const parameters = (op['parameters'] ?? []) as {
    name: string;
    in: string;
    required?: boolean;
    schema?: JsonObject;
  }[];
  const params =
    parameters.length === 0
      ? ''
      : `<table><tr><th>parameter</th><th>in</th><th>required</th><th>type</th></tr>${parameters
          .map(
            (p) =>
              `<tr><td><code>${escape(p.name)}</code></td><td>${escape(p.in)}</td><td>${p.required === true ? 'yes' : 'no'}</td><td><code>${escape(String(p.schema?.['type'] ?? ''))}</code></td></tr>`,
          )
          .join('')}</table>`;
  const body = op['requestBody'] as { content?: unknown; required?: boolean } | undefined;
  const responses = Object.entries(
    (op['responses'] ?? {}) as Record<string, { description?: string; content?: unknown }>,
  )
    .map(
      ([status, r]) =>
        `<li><b>${escape(status)}</b> ${escape(r.description ?? '')}${r.content === undefined ? '' : schemaBlock(r.content)}</li>`,
    )
    .join('');
  const permission =
    op['x-permission'] === undefined ? '' : ` <span class="perm">${escape(String(op['x-permission']))}</span>`;
  return `<section id="${id}"><h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code>${permission}</h3>
<p>${escape(String(op['summary'] ?? ''))}${op['description'] === undefined ? '' : `<br>${escape(String(op['description']))}`}</p>
${params}${body === undefined ? '' : `<h4>request body${body.required === true ? '' : ' (optional)'}</h4>${schemaBlock(body.content)}`}
<h4>responses</h4><ul>${responses}</ul></section>`;
};

/** The whole page: a table of contents by tag, then every operation. */
export const openApiHtml = (document: JsonObject): string => {
  const info = (document['info'] ?? {}) as { title?: string; version?: string; description?: string };
  const paths = (document['paths'] ?? {}) as Record<string, Record<string, JsonObject>>;
  const byTag = new Map<string, string[]>();
  const toc = new Map<string, string[]>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op === undefined) continue;
      const tag = String(((op['tags'] ?? ['other']) as string[])[0] ?? 'other');
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationHtml(method, path, op)]);
      toc.set(tag, [
        ...(toc.get(tag) ?? []),
        `<a href="#${escape(String(op['operationId'] ?? ''))}">${method.toUpperCase()} ${escape(path)}</a>`,
      ]);
    }
  }
  const tags = [...byTag.keys()].sort();
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(info.title ?? 'API')} ${escape(info.version ?? '')}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em 2em;color:#1d1d1f}
code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f7;padding:.6em;overflow:auto;max-height:30em}
section{border-top:1px solid #ddd;padding:.4em 0}h3{margin:.5em 0}.method{display:inline-block;min-width:4em;color:#fff;border-radius:3px;padding:0 .3em;text-align:center}
.get{background:#2f7d32}.post{background:#1565c0}.put{background:#ef6c00}.patch{background:#6a1b9a}.delete{background:#c62828}
.perm{font-size:12px;color:#555;border:1px solid #bbb;border-radius:3px;padding:0 .3em}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.15em .5em;text-align:left}
.media{color:#555;font-size:12px}nav a{display:block}nav details{margin:.2em 0}
</style></head><body>
<h1>${escape(info.title ?? 'API')} <small>${escape(info.version ?? '')}</small></h1>
<p>${escape(info.description ?? '')}</p>
<p>The machine-readable document is <a href="openapi.json">openapi.json</a> (OpenAPI 3.1): generate a client from it.</p>
<nav>${tags.map((t) => `<details><summary>${escape(t)} (${toc.get(t)!.length})</summary>${toc.get(t)!.join('')}</details>`).join('')}</nav>
${tags.map((t) => `<h2>${escape(t)}</h2>${byTag.get(t)!.join('\n')}`).join('\n')}
</body></html>`;
};
