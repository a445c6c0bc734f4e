import { describe, expect, it } from '@jest/globals';
import { canonicalJson, fingerprintOf } from '../../functions/middleware/idempotency.js';

describe('idempotency fingerprint (§1.10)', () => {
  it('sorts object keys recursively and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('is equal for bodies differing only in key order, and differs by method, path or body', () => {
    const base = fingerprintOf('POST', '/api/v1/chats', { a: 1, b: [1, 2] });
    expect(fingerprintOf('POST', '/api/v1/chats', { b: [1, 2], a: 1 })).toBe(base);
    expect(fingerprintOf('PATCH', '/api/v1/chats', { a: 1, b: [1, 2] })).not.toBe(base);
    expect(fingerprintOf('POST', '/api/v1/chats/x', { a: 1, b: [1, 2] })).not.toBe(base);
    expect(fingerprintOf('POST', '/api/v1/chats', { a: 1, b: [2, 1] })).not.toBe(base);
  });

  it('fingerprints a body-less request as an empty object', () => {
    expect(fingerprintOf('POST', '/p', undefined)).toBe(fingerprintOf('POST', '/p', {}));
  });
});
