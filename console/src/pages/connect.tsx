/** The consent page of the service's authorization server for MCP clients (/connect/:uid); the pieces are in ./connect/. */
export { ConsentPage } from './connect/consent';
