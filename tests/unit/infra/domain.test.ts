// The optional custom domain of the cloud template (infra/domain.cjs): both parameters or neither, a host name and
// an ACM certificate in us-east-1 (the only region CloudFront takes certificates from), checked before packaging.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const { checkDomain } = createRequire(import.meta.url)('../../../infra/domain.cjs') as {
  checkDomain: (name: unknown, certificateArn: unknown) => { name: string; certificateArn: string };
};
const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012';

describe('checkDomain', () => {
  it('is empty without parameters, and the trimmed lower-case name with its certificate when both are given', () => {
    expect(checkDomain('', undefined)).toEqual({ name: '', certificateArn: '' });
    expect(checkDomain(' Deploy.Example.com ', CERTIFICATE)).toEqual({
      name: 'deploy.example.com',
      certificateArn: CERTIFICATE,
    });
  });

  it('refuses one without the other, a name that is not a host, and a certificate outside us-east-1', () => {
    expect(() => checkDomain('deploy.example.com', '')).toThrow('both parameters');
    expect(() => checkDomain('', CERTIFICATE)).toThrow('both parameters');
    expect(() => checkDomain('https://deploy.example.com', CERTIFICATE)).toThrow('not a host name');
    expect(() => checkDomain('deploy.example.com', CERTIFICATE.replace('us-east-1', 'eu-west-1'))).toThrow('us-east-1');
  });
});
