import { describe, expect, it } from 'vitest';
import { deploymentDetailView, deploymentView, pendingRequestView } from '../../../../domain/deployments/views.js';
import { delegatedCaller } from '../../../../domain/identity/delegation.js';
import { personName } from '../../../../domain/identity/names.js';
import { aDeployment, aDraft, aPendingRequest } from '../../../fakes/deployments.js';

const USER_ID = 'c0000000-0000-4000-8000-000000000001';

describe('triggered_by_name (issue 30, people not ids)', () => {
  it('shows the name stored at creation beside the id, in the list item and the detail', () => {
    // Prepare
    const deployment = aDeployment({ triggeredBy: USER_ID, triggeredByName: 'Ada Lovelace' });

    // Act
    const item = deploymentView(deployment);
    const detail = deploymentDetailView(deployment, { plan: false });

    // Assess
    expect(item).toMatchObject({ triggered_by: USER_ID, triggered_by_name: 'Ada Lovelace' });
    expect(detail).toMatchObject({ triggered_by: USER_ID, triggered_by_name: 'Ada Lovelace' });
  });

  it('falls back to the id for a record stored before names were', () => {
    const item = deploymentView(aDeployment({ triggeredBy: USER_ID }));

    expect(item.triggered_by_name).toBe(USER_ID);
  });

  it('carries the name in a pending request, and falls back to the id there too', () => {
    const named = pendingRequestView(
      aPendingRequest({ draft: aDraft({ triggeredByName: 'Ada' }), triggeredByName: 'Ada' }),
    );
    const older = pendingRequestView(aPendingRequest());

    expect(named).toMatchObject({ triggered_by: USER_ID, triggered_by_name: 'Ada' });
    expect(older).toMatchObject({ triggered_by: USER_ID, triggered_by_name: USER_ID });
  });

  it('keeps hostile text as data: the name is a plain string, never interpreted', () => {
    const hostile = '<img src=x onerror=alert(1)>';

    expect(deploymentView(aDeployment({ triggeredByName: hostile })).triggered_by_name).toBe(hostile);
  });
});

describe('personName', () => {
  it.each([
    [{ displayName: 'Ada Lovelace', username: 'ada' }, 'Ada Lovelace'],
    [{ displayName: '  Ada  ', username: 'ada' }, 'Ada'],
    [{ displayName: null, username: 'ada' }, 'ada'],
    [{ displayName: '   ', username: 'ada' }, 'ada'],
  ])('%j is shown as %s', (user, shown) => {
    expect(personName(user)).toBe(shown);
  });

  it('names a delegated caller by its owner (an API key, an OAuth token or a trigger acts for its owner)', () => {
    const caller = delegatedCaller(
      { id: USER_ID, tenantId: null, roles: [], displayName: 'Owner Name', username: 'owner' },
      new Map(),
      { type: 'trigger', id: 'trigger-1', name: 'ci', scopes: [] },
    );

    expect(caller).toMatchObject({ kind: 'trigger', userId: USER_ID, userName: 'Owner Name' });
  });
});
