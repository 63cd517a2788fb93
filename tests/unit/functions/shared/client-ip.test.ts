import { describe, expect, it } from 'vitest';
import { clientIp } from '../../../../functions/shared/client-ip.js';
import { httpEvent } from '../../../fakes/lambda.js';

describe('clientIp', () => {
  const event = httpEvent('GET', '/x', { headers: { 'x-forwarded-for': '198.51.100.9, 10.0.0.1' } });

  it('is API Gateway sourceIp in the cloud, whatever X-Forwarded-For says', () => {
    expect(clientIp(event, false)).toBe('203.0.113.7');
  });

  it('is the first X-Forwarded-For entry behind the local front', () => {
    expect(clientIp(event, true)).toBe('198.51.100.9');
    expect(clientIp(httpEvent('GET', '/x'), true)).toBe('203.0.113.7');
  });
});
