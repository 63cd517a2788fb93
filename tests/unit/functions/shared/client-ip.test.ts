import { describe, expect, it } from 'vitest';
import { clientIp } from '../../../../functions/shared/client-ip.js';
import { httpEvent } from '../../../fakes/lambda.js';

const cloud = { behindLocalFront: false, edgeSecret: 's3cret-value' };
const local = { behindLocalFront: true, edgeSecret: undefined };

describe('clientIp', () => {
  const event = (headers: Record<string, string>) => httpEvent('GET', '/x', { headers });

  it('is API Gateway sourceIp in the cloud, whatever X-Forwarded-For says', () => {
    expect(clientIp(event({ 'x-forwarded-for': '198.51.100.9' }), cloud)).toBe('203.0.113.7');
  });

  it('is the CloudFront viewer address when the origin secret matches', () => {
    expect(
      clientIp(event({ 'cloudfront-viewer-address': '198.51.100.20:51234', 'x-deployer-edge': 's3cret-value' }), cloud),
    ).toBe('198.51.100.20');
    expect(
      clientIp(event({ 'cloudfront-viewer-address': '2001:db8::7:51234', 'x-deployer-edge': 's3cret-value' }), cloud),
    ).toBe('2001:db8::7');
  });

  it('is the X-Forwarded-For entry CloudFront appended, when the origin secret matches', () => {
    const forwarded = { 'x-forwarded-for': '10.9.9.9, 198.51.100.30, 203.0.113.7', 'x-deployer-edge': 's3cret-value' };
    expect(clientIp(event(forwarded), cloud)).toBe('198.51.100.30'); // the client's own (forged) entry is ignored
  });

  it('ignores a viewer address sent without, or with a wrong, origin secret (API Gateway is reachable directly)', () => {
    expect(clientIp(event({ 'cloudfront-viewer-address': '198.51.100.20:51234' }), cloud)).toBe('203.0.113.7');
    expect(
      clientIp(event({ 'cloudfront-viewer-address': '198.51.100.20:51234', 'x-deployer-edge': 'guess' }), cloud),
    ).toBe('203.0.113.7');
  });

  it('is the first X-Forwarded-For entry behind the local front', () => {
    expect(clientIp(event({ 'x-forwarded-for': '198.51.100.9, 10.0.0.1' }), local)).toBe('198.51.100.9');
    expect(clientIp(httpEvent('GET', '/x'), local)).toBe('203.0.113.7');
  });
});
