import { describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { presentsSecret, requiresSecret, secretMatches } from '../../functions/middleware/auth.js';
import { allowedOrigin } from '../../functions/middleware/cors.js';
import { clientOf } from '../../functions/middleware/rate-limit.js';
import { resolveConfig } from '../../functions/platform/instance-config.js';

const event = (headers: Record<string, string>, sourceIp?: string, query?: Record<string, string>) =>
  ({
    headers,
    queryStringParameters: query,
    requestContext: { http: { sourceIp } },
  }) as unknown as APIGatewayProxyEventV2;

describe('auth helpers', () => {
  it('compares secrets exactly', () => {
    expect(secretMatches('abc', 'abc')).toBe(true);
    expect(secretMatches('abcd', 'abc')).toBe(false);
    expect(secretMatches(undefined, 'abc')).toBe(false);
  });

  it('accepts exactly "Bearer <secret>" or the token query', () => {
    expect(presentsSecret(event({ authorization: 'Bearer s3' }), 's3')).toBe(true);
    expect(presentsSecret(event({ authorization: 'Token s3' }), 's3')).toBe(false);
    expect(presentsSecret(event({}, undefined, { token: 's3' }), 's3')).toBe(true);
  });

  it('requires the secret per auth class and toggle', () => {
    const on = resolveConfig({ security: { instanceSecretEnabled: true, instanceSecret: 'x' } });
    const reads = resolveConfig({
      security: { instanceSecretEnabled: true, instanceSecret: 'x', readEndpointsRequireInstanceSecret: true },
    });
    const off = resolveConfig({ security: { readEndpointsRequireInstanceSecret: true } });
    expect([requiresSecret('write', on), requiresSecret('read', on), requiresSecret('public', on)]).toEqual([
      true,
      false,
      false,
    ]);
    expect([requiresSecret('write', reads), requiresSecret('read', reads), requiresSecret('public', reads)]).toEqual([
      true,
      true,
      false,
    ]);
    expect([requiresSecret('write', off), requiresSecret('read', off)]).toEqual([false, false]);
  });
});

describe('CORS origin rule', () => {
  it('echoes any origin for an empty list, exact matches otherwise, nothing without Origin', () => {
    expect(allowedOrigin('http://x', [])).toBe('http://x');
    expect(allowedOrigin('http://x', ['http://y'])).toBeUndefined();
    expect(allowedOrigin('http://y', ['http://y'])).toBe('http://y');
    expect(allowedOrigin(undefined, [])).toBeUndefined();
  });
});

describe('rate-limit client identity', () => {
  const forwarded = {
    'x-forwarded-for': '203.0.113.9, 10.0.0.1',
    'x-real-ip': '198.51.100.2',
    'cf-connecting-ip': '192.0.2.1',
  };
  it('prefers the platform source IP', async () => {
    expect(await clientOf(event(forwarded, '1.2.3.4'), true)).toBe('1.2.3.4');
  });
  it('uses forwarded headers, in order, only when trusted and no IP is known', async () => {
    expect(await clientOf(event(forwarded), true)).toBe('203.0.113.9');
    expect(await clientOf(event({ 'x-forwarded-for': 'unknown', 'x-real-ip': '198.51.100.2' }), true)).toBe(
      '198.51.100.2',
    );
    expect(await clientOf(event({ 'cf-connecting-ip': '192.0.2.1' }), true)).toBe('192.0.2.1');
    expect(await clientOf(event(forwarded), false)).toBe('instance');
    expect(await clientOf(event({}), true)).toBe('instance');
  });
});
