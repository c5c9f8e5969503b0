import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageDto } from '../../common/api-schemas.js';
import { SITE_SCOPES, type SiteScope } from '../../sites/scopes.js';
import type { CredentialKind, CredentialStatus } from '../credential.entity.js';
import { type McpToolAnnotations, SITE_PROTOCOLS, type SiteProtocol } from '../../sites/mcp-state.js';
import type { ConnectionStatus, CredentialConnection, SiteResponse, TokenAnswer } from '../site-response.js';

const CREDENTIAL_KINDS = ['bearer', 'oauth2'] as const satisfies readonly CredentialKind[];
const CREDENTIAL_STATUSES = ['active', 'reauth_required'] as const satisfies readonly CredentialStatus[];
const CONNECTION_STATUSES = [
  'connected',
  'expired',
  'reconnect_required',
] as const satisfies readonly ConnectionStatus[];

export class SiteAuthDto {
  @ApiProperty({ enum: CREDENTIAL_KINDS, description: 'How the site takes credentials' })
  type: 'bearer' | 'oauth2';

  @ApiPropertyOptional({
    type: [String],
    description:
      "oauth2: the scopes the site offers (an agentsite site's: read, write, delete, admin; an MCP server's: its own)",
  })
  scopes?: string[];
}

/** MCP tool annotations: hints the server gives about a tool (shown, never trusted for security). */
export class SiteToolAnnotationsDto implements McpToolAnnotations {
  @ApiPropertyOptional({ description: "The server's display title of the tool" })
  title?: string;

  @ApiPropertyOptional({ description: 'The tool does not change anything' })
  readOnlyHint?: boolean;

  @ApiPropertyOptional({ description: 'The tool may delete or overwrite' })
  destructiveHint?: boolean;

  @ApiPropertyOptional({ description: 'Calling it again with the same input has no further effect' })
  idempotentHint?: boolean;

  @ApiPropertyOptional({ description: 'The tool reaches the world outside the server (web, other services)' })
  openWorldHint?: boolean;
}

export class SiteToolDto {
  @ApiProperty()
  name: string;

  @ApiPropertyOptional({ description: "MCP: the tool's display title" })
  title?: string;

  @ApiProperty()
  description: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The tool's input_schema (JSON Schema) from the manifest",
  })
  inputSchema: unknown;

  @ApiProperty({ enum: SITE_SCOPES, description: 'The scope the service derived for the tool' })
  scope: SiteScope;

  @ApiPropertyOptional({
    type: SiteToolAnnotationsDto,
    description: "MCP: the tool's annotations as the server sent them",
  })
  annotations?: SiteToolAnnotationsDto;
}

/** Whether the stored credential can be used now, and until when. */
export class CredentialConnectionDto implements CredentialConnection {
  @ApiProperty({
    enum: CONNECTION_STATUSES,
    description:
      'connected: calls use it; expired: its access ended and cannot be renewed (connect again, or store a new token); ' +
      'reconnect_required: the site refused to renew it',
  })
  status: ConnectionStatus;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the stored access ends (null: no expiry known). Renewed automatically when refreshable',
  })
  expiresAt: string | null;

  @ApiProperty({
    description:
      'true: an OAuth connection with a refresh token, renewed by the service; false: a token, or an OAuth grant without ' +
      'a refresh token, which ends at expiresAt',
  })
  refreshable: boolean;
}

export class SiteCredentialDto {
  // OpenAPI 3.0.3: a nullable enum lists null among its values.
  @ApiProperty({ enum: [...CREDENTIAL_KINDS, null], nullable: true, description: 'null: no credential is stored' })
  kind: CredentialKind | null;

  @ApiPropertyOptional({
    enum: CREDENTIAL_STATUSES,
    description: 'reauth_required: the site refused the stored credential; connect it again',
  })
  status?: CredentialStatus;

  @ApiPropertyOptional({ example: '…a1b2', description: 'The end of the token, never the token' })
  tokenHint?: string;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true })
  expiresAt?: string | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    description:
      "oauth2: the scopes granted (an agentsite site's: read, write, delete, admin; an MCP server's: its own)",
  })
  scopes?: string[] | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'MCP: the scope the server asked for in a refusal (insufficient_scope); connect again to grant it',
  })
  requiredScope?: string | null;

  @ApiPropertyOptional({
    type: CredentialConnectionDto,
    description: 'Present when a credential is stored: whether it can be used now, and until when',
  })
  connection?: CredentialConnectionDto;
}

/** A vault site: its manifest as the service read it, and its credential as a hint. */
export class SiteResponseDto implements SiteResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ description: "The site's address", example: 'https://notes.example.com' })
  url: string;

  @ApiProperty({
    enum: SITE_PROTOCOLS,
    description: 'agentsite: a manifest and HTTPS tools; mcp: an MCP server at url',
  })
  protocol: SiteProtocol;

  @ApiProperty({
    enum: ['ready', 'needs_connection'],
    description: 'needs_connection: an MCP server that lists its tools only once a credential works',
  })
  status: 'ready' | 'needs_connection';

  @ApiProperty()
  name: string;

  @ApiProperty()
  version: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ description: "The manifest's server.url, where tools are called (MCP: the endpoint)" })
  serverUrl: string;

  @ApiProperty({ type: SiteAuthDto })
  auth: SiteAuthDto;

  @ApiProperty({ type: [SiteToolDto] })
  tools: SiteToolDto[];

  @ApiProperty({ type: SiteCredentialDto })
  credential: SiteCredentialDto;

  @ApiProperty({ format: 'date-time' })
  manifestFetchedAt: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class SitePageDto extends PageDto(SiteResponseDto) {}

/** A stored bearer token, as a hint. */
export class TokenAnswerDto implements TokenAnswer {
  @ApiProperty({ example: '…a1b2', description: 'The end of the token, never the token' })
  tokenHint: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt: string | null;
}
