// A webhook as the API answers it, and its form's fields: the event types the caller may subscribe to (each needs
// its resource's read permission), the format, and the request body they make.

/** Each event type one may subscribe to, and the read permission it needs (domain/webhooks/events.ts). */
const EVENT_TYPES: readonly (readonly [string, string])[] = [
  ['deployment.created', 'deployments:read'],
  ['deployment.started', 'deployments:read'],
  ['deployment.succeeded', 'deployments:read'],
  ['deployment.failed', 'deployments:read'],
  ['deployment.cancelled', 'deployments:read'],
  ['deployment.rolled_back', 'deployments:read'],
  ['pending_request.queued', 'pending_deployments:read'],
  ['pending_request.dispatched', 'pending_deployments:read'],
  ['target.online', 'targets:read'],
  ['target.offline', 'targets:read'],
  ['analysis.completed', 'analysis:read'],
];

export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly event_types: string[];
  readonly format: 'standard' | 'slack';
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly consecutive_failures: number;
  readonly created_at: string;
}

/** The event types the caller may subscribe to, as checkboxes. */
export const EventChoices = ({
  permissions,
  chosen,
}: {
  permissions: ReadonlySet<string>;
  chosen: readonly string[];
}) => (
  <fieldset class="choices inline-choices">
    <legend>Events</legend>
    {EVENT_TYPES.filter(([, p]) => permissions.has(p)).map(([type]) => (
      <label key={type}>
        <input type="checkbox" name="event_type" value={type} defaultChecked={chosen.includes(type)} /> {type}
      </label>
    ))}
  </fieldset>
);

export const FormatChoice = ({ format }: { format: string }) => (
  <label>
    Format
    <select name="format">
      <option value="standard" selected={format === 'standard'}>
        Standard Webhooks (JSON)
      </option>
      <option value="slack" selected={format === 'slack'}>
        Slack incoming webhook
      </option>
    </select>
  </label>
);

/** The request body of a webhook's form (new or edited). */
export const webhookFields = (form: FormData) => {
  const description = String(form.get('description') ?? '').trim();
  return {
    url: String(form.get('url') ?? '').trim(),
    description: description === '' ? null : description,
    event_types: form.getAll('event_type').map(String),
    format: String(form.get('format') ?? 'standard'),
  };
};
