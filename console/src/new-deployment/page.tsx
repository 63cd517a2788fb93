// A new deployment: an action (or sequence, or solution) and a version range, targets by list or by tags with a
// live count of the targets that match, the strategy fields and variables; a preview first (plan, warnings, target
// health), then create. A freeze shows its reason and, for admins, the override with its reason field.
import { useState } from 'preact/hooks';
import { api, isApiError, type ApiError, type User } from '../api.js';
import { HowFields, WhatFields, WhereFields } from './fields.js';
import { PreviewPanel, Refusal, type Preview } from './outcome.js';
import { useNewDeploymentForm } from './use-form.js';

export const NewDeployment = (_props: { user: User }) => {
  const form = useNewDeploymentForm();
  const [preview, setPreview] = useState<Preview | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [override, setOverride] = useState('');
  const [busy, setBusy] = useState(false);

  const run = async (what: 'preview' | 'create', extra: Record<string, unknown> = {}) => {
    setBusy(true);
    setError(undefined);
    try {
      if (what === 'preview') setPreview(await api<Preview>('POST', '/deployments/preview', form.body()));
      else {
        const created = await api<{ pending: boolean; deployment_id?: string }>(
          'POST',
          '/deployments',
          form.body(extra),
        );
        window.location.hash = created.pending ? '#/queue' : `#/deployments/${created.deployment_id}`;
      }
    } catch (e) {
      setError(isApiError(e) ? e : { status: 0, code: 'NETWORK', message: 'The service cannot be reached.' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">New deployment</h1>
      <form
        class="stack-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run('preview');
        }}
      >
        <WhatFields form={form} />
        <WhereFields form={form} />
        <HowFields form={form} />
        <button type="submit" disabled={busy || form.sourceId === ''}>
          Preview
        </button>
      </form>
      {error === undefined ? null : (
        <Refusal
          error={error}
          override={{
            reason: override,
            setReason: setOverride,
            submit: () => void run('create', { override_freeze: true, override_reason: override }),
          }}
        />
      )}
      {preview === undefined ? null : (
        <PreviewPanel preview={preview} busy={busy} onCreate={() => void run('create')} />
      )}
    </section>
  );
};
