// The signed call a pipeline makes to a deploy trigger (README, "Deploy from a webhook"): a sample JSON body from the
// trigger's rules and filters, and the curl line signed the Standard Webhooks way, with Copy.
import { CopyButton } from '../copy-widgets.js';

export interface Filter {
  readonly field: string;
  readonly one_of: string[];
}
export interface Rules {
  readonly variables: Record<string, string>;
  readonly version_requirement: string | null;
}

/** A JSON body the trigger takes: each filter's first value, and a placeholder at each path a rule reads. */
export const sampleBody = (rules: Rules, filters: readonly Filter[]): string => {
  const body: Record<string, unknown> = {};
  const put = (path: string, value: string) => {
    const parts = path.split('.');
    let at = body;
    for (const part of parts.slice(0, -1)) {
      if (typeof at[part] !== 'object' || at[part] === null) at[part] = {};
      at = at[part] as Record<string, unknown>;
    }
    at[parts[parts.length - 1]!] = value;
  };
  for (const f of filters) if (f.one_of[0] !== undefined) put(f.field, f.one_of[0]);
  if (rules.version_requirement !== null) put(rules.version_requirement, '^1');
  for (const [name, path] of Object.entries(rules.variables)) put(path, `value of ${name}`);
  return JSON.stringify(body);
};

/** A shell word in single quotes. */
const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The call a pipeline makes, signed the Standard Webhooks way (README, "Deploy from a webhook"). */
export const signedCurl = (hookUrl: string, secret: string | undefined, body: string) =>
  [
    secret === undefined
      ? "SECRET='whsec_...'   # the trigger's secret, shown when it was made (or after New secret)"
      : `SECRET=${quoted(secret)}`,
    `HOOK=${quoted(hookUrl)}`,
    `BODY=${quoted(body)}`,
    'ID="call-$(date +%s)-$$"; TS=$(date +%s)',
    `SIG=$(printf '%s.%s.%s' "$ID" "$TS" "$BODY" | openssl dgst -sha256 -mac HMAC \\`,
    `  -macopt "hexkey:$(printf %s "\${SECRET#whsec_}" | base64 -d | xxd -p -c 256)" -binary | base64)`,
    `curl -s -X POST "$HOOK" -H 'content-type: application/json' -H "webhook-id: $ID" \\`,
    `  -H "webhook-timestamp: $TS" -H "webhook-signature: v1,$SIG" -d "$BODY"`,
  ].join('\n');

export const CurlExample = ({
  id,
  trigger,
  secret,
}: {
  id: string;
  trigger: { hook_url: string; rules: Rules; filters: readonly Filter[] };
  secret?: string;
}) => {
  const text = signedCurl(trigger.hook_url, secret, sampleBody(trigger.rules, trigger.filters));
  return (
    <>
      <p>A signed call (Standard Webhooks: HMAC-SHA256 of id.timestamp.body), as a pipeline would make it:</p>
      <pre class="command" id={id} data-testid={id}>
        {text}
      </pre>
      <CopyButton text={text} select={id} label="Copy the signed call" />
    </>
  );
};
