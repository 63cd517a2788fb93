// The SSRF rules of requests to identity providers, as tables: addresses, and URLs before any request.
import { describe, expect, it } from 'vitest';
import {
  isAllowedHost,
  isRefusedAddress,
  parseAllowedHosts,
  urlProblem,
} from '../../../../infra/net/address-policy.js';

describe('isRefusedAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['192.168.0.10', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['::1', true],
    ['::', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:8.8.8.8', true],
    ['::ffff:0:127.0.0.1', true], // IPv4-translated (RFC 2765): ::ffff:0:0:0/96
    ['::ffff:0:a9fe:a9fe', true],
    ['0:0:0:0:ffff:0:808:808', true],
    ['fd12:3456::1', true],
    ['fe80::1', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['2002:7f00:1::1', true],
    ['not-an-ip', true],
    ['8.8.8.8', false],
    ['172.32.0.1', false],
    ['93.184.216.34', false],
    ['2606:4700:4700::1111', false],
  ])('%s -> %s', (address, refused) => {
    expect(isRefusedAddress(address)).toBe(refused);
  });
});

describe('urlProblem', () => {
  const allowed = parseAllowedHosts(' 127.0.0.1:8080 , IdP.Internal ');
  it.each([
    ['https://idp.example.com/', undefined],
    ['https://8.8.8.8/', undefined],
    ['http://idp.example.com/', 'must be an https URL'],
    ['ftp://idp.example.com/', 'must be an https URL'],
    ['file:///etc/passwd', 'must be an https URL'],
    ['https://user:pw@idp.example.com/', 'must not carry credentials'],
    ['https://idp.example.com/#x', 'must not have a fragment'],
    ['https://127.0.0.1/', 'must not point to a private, loopback, link-local or otherwise internal address'],
    ['https://[::1]:8443/', 'must not point to a private, loopback, link-local or otherwise internal address'],
    ['https://169.254.169.254/', 'must not point to a private, loopback, link-local or otherwise internal address'],
    ['http://127.0.0.1:8080/realm', undefined],
    ['http://127.0.0.1:8081/realm', 'must be an https URL'],
    ['http://idp.internal:9000/', undefined],
    ['relative/path', 'must be an absolute URL'],
  ])('%s -> %s', (url, problem) => {
    expect(urlProblem(allowed, url)).toBe(problem);
  });

  it('matches an entry without a port on any port, one with a port on that port only', () => {
    expect(isAllowedHost(['idp.internal'], new URL('https://idp.internal:1234'))).toBe(true);
    expect(isAllowedHost(['idp.internal:443'], new URL('https://idp.internal'))).toBe(true);
    expect(isAllowedHost(['idp.internal:443'], new URL('https://idp.internal:444'))).toBe(false);
    expect(isAllowedHost([], new URL('https://idp.internal'))).toBe(false);
  });
});
