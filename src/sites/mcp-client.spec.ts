import { describe, expect, it } from '@jest/globals';
import { parseChallenge, retryAfterSeconds } from './mcp-client.js';

describe('MCP client answers', () => {
  it("reads a 401's challenge: resource metadata, scope and error", () => {
    expect(
      parseChallenge(
        401,
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"',
      ),
    ).toEqual({
      status: 401,
      resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource',
      scope: 'files:read',
      error: null,
    });
    expect(parseChallenge(403, 'Bearer error="insufficient_scope", scope="files:write"')).toEqual({
      status: 403,
      resourceMetadataUrl: null,
      scope: 'files:write',
      error: 'insufficient_scope',
    });
    expect(parseChallenge(401, null)).toEqual({ status: 401, resourceMetadataUrl: null, scope: null, error: null });
  });

  it('reads Retry-After as seconds or as a date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds(null, now)).toBeNull();
    expect(retryAfterSeconds('soon', now)).toBeNull();
  });
});
