// A webhook URL is often a credential: readers without tenants:update see only its scheme and host.
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../../../domain/identity/types.js';
import type { Permission } from '../../../../domain/identity/permissions.js';
import { redactedUrl, subscriptionView } from '../../../../domain/webhooks/subscriptions.js';
import type { Subscription } from '../../../../domain/webhooks/types.js';

const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX';
const subscription: Subscription = {
  id: 'w1',
  tenantId: 't1',
  url: SLACK,
  description: null,
  eventTypes: ['deployment.failed'],
  format: 'slack',
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  consecutiveFailures: 0,
  sealedSecret: 'sealed',
  createdBy: 'u1',
  createdAt: '2026-11-27T10:00:00.000Z',
  updatedAt: '2026-11-27T10:00:00.000Z',
  revision: 1,
};
const caller = (...permissions: Permission[]): Caller => ({
  kind: 'user',
  userId: 'u1',
  tenantId: 't1',
  roles: [],
  permissions: new Set(permissions),
});

describe('webhook URLs', () => {
  it.each([
    [SLACK, 'https://hooks.slack.com/…'],
    ['https://ci.example.com:8443/hook?token=abc#x', 'https://ci.example.com:8443/…'],
    ['http://127.0.0.1:4000/', 'http://127.0.0.1:4000/…'],
    ['https://[::1]/x', 'https://[::1]/…'],
    ['not a url', '…'],
  ])('%s is shown as %s', (url, shown) => {
    expect(redactedUrl(url)).toBe(shown);
  });

  it('shows the whole URL only to tenants:update holders', () => {
    expect(subscriptionView(subscription, caller('tenants:read')).url).toBe('https://hooks.slack.com/…');
    expect(subscriptionView(subscription, caller('tenants:read', 'tenants:update')).url).toBe(SLACK);
  });
});
