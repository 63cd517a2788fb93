// The optional custom domain of the cloud stack (docs/cloud.md, "A custom domain"), from the deploy's parameters:
// `serverless deploy --stage prod --param="domainName=deploy.example.com" --param="certificateArn=arn:aws:acm:us-east-1:...`.
// Both or neither: a name without a certificate (or the reverse) fails the packaging, before anything is deployed.
// CloudFront takes certificates from us-east-1 only, whatever the stack's region.
'use strict';

const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CERTIFICATE = /^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[0-9a-f-]{36}$/;

/** `{ name, certificateArn }`, both '' when no custom domain is configured. */
const checkDomain = (domainName, certificateArn) => {
  const name = String(domainName ?? '')
    .trim()
    .toLowerCase();
  const certificate = String(certificateArn ?? '').trim();
  if (name === '' && certificate === '') return { name: '', certificateArn: '' };
  if (name === '' || certificate === '')
    throw new Error('A custom domain needs both parameters: domainName and certificateArn (docs/cloud.md)');
  if (!HOST.test(name))
    throw new Error(`domainName: ${JSON.stringify(name)} is not a host name such as deploy.example.com`);
  if (!CERTIFICATE.test(certificate))
    throw new Error(`certificateArn: ${JSON.stringify(certificate)} is not an ACM certificate ARN in us-east-1`);
  return { name, certificateArn: certificate };
};

module.exports = {
  domain: async ({ resolveVariable }) =>
    checkDomain(await resolveVariable("param:domainName, ''"), await resolveVariable("param:certificateArn, ''")),
  checkDomain,
};
