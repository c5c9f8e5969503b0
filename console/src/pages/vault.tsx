/** The vault area: the list of sites (/vault) and one site (/vault/:siteId); the pieces are in ./vault/. */
export { VaultPage } from './vault/vault-list';
export { SitePage } from './vault/site-page';
