import type { CredentialEntity } from '../../vault/credential.entity.js';
import type { SiteEntity } from '../../vault/site.entity.js';
import type { SessionSite } from '../chat.entities.js';
import type { ChatRepository } from '../chat.repository.js';

/** The vault reads of ChatRepository a session's description makes, over sites and credentials in memory. */
export class FakeChatRepository implements Pick<ChatRepository, 'sitesOf' | 'credentialsOf'> {
  readonly sites: SiteEntity[] = [];
  readonly credentials: CredentialEntity[] = [];

  sitesOf(_owner: { userId: string; workspaceId: string | null }, chosen: SessionSite[]): Promise<SiteEntity[]> {
    return Promise.resolve(
      chosen.map((c) => this.sites.find((s) => s.id === c.siteId)).filter((s): s is SiteEntity => s !== undefined),
    );
  }

  credentialsOf(siteIds: string[]): Promise<CredentialEntity[]> {
    return Promise.resolve(this.credentials.filter((c) => siteIds.includes(c.siteId)));
  }
}
