import { describe, expect, it, jest } from '@jest/globals';
import { standIn } from '../common/testing/stand-in.js';
import type { McpAuthorizationServer } from './authorization-server.js';
import { ConnectedAppsService } from './connected-apps.service.js';
import type { McpAuthRepository } from './mcp-auth.repository.js';
import { FakeMcpAuthRepository } from './testing/fake-mcp-auth.repository.js';

/** The service over a provider whose access tokens are never found: what is looked up is what counts. */
function serviceWith(find: (token: string) => Promise<undefined>): ConnectedAppsService {
  const provider = { AccessToken: { find } } as unknown as McpAuthorizationServer['provider'];
  const server = standIn<McpAuthorizationServer>({ provider });
  return new ConnectedAppsService(server, standIn<McpAuthRepository>(new FakeMcpAuthRepository()));
}

describe('ConnectedAppsService.verify', () => {
  it('looks up an opaque token, and neither a JWT (the API token) nor an empty or oversized one', async () => {
    const find = jest.fn(async (_token: string) => undefined);
    const service = serviceWith(find);
    const opaque = 'u3eR8fT_-9aZ'.padEnd(43, 'x');
    expect(await service.verify(opaque)).toBeUndefined();
    expect(find.mock.calls).toEqual([[opaque]]);
    expect(await service.verify('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl')).toBeUndefined();
    expect(await service.verify('')).toBeUndefined();
    expect(await service.verify('x'.repeat(513))).toBeUndefined();
    expect(find).toHaveBeenCalledTimes(1);
  });
});
