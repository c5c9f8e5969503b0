import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsUUID, ValidateIf } from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../../workspaces/workspace.entities.js';

/** The user's answer on the consent page. */
export class McpConsentDecisionDto {
  @ApiProperty({ description: 'true: connect the app; false: refuse (the app is told access_denied)' })
  @IsBoolean()
  approve!: boolean;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The Team workspace the app acts in; null: your personal sites and agents',
  })
  @ValidateIf((_object: object, value: unknown) => value !== null)
  @IsUUID('all')
  workspaceId!: string | null;
}

export class McpConsentClientDto {
  @ApiProperty({ description: 'The client_id (a URL for a client described by a Client ID Metadata Document)' })
  id!: string;

  @ApiProperty({ description: 'The name the app gave itself (its client_id when it gave none)' })
  name!: string;

  @ApiProperty({ type: String, nullable: true, description: "The app's home page, as the app states it" })
  uri!: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The app's logo, as the app states it" })
  logoUri!: string | null;

  @ApiProperty({ description: 'The host the browser returns to (the redirect URI’s host)', example: 'localhost:33418' })
  redirectHost!: string;
}

export class McpConsentWorkspaceDto {
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null: your personal scope' })
  id!: string | null;

  @ApiProperty({ description: 'The workspace’s name ("Personal" for your personal scope)' })
  name!: string;

  @ApiProperty({ enum: WORKSPACE_ROLES, description: 'Your role there (owner for your personal scope)' })
  role!: WorkspaceRole;
}

/** A pending connection of an MCP client, as the consent page shows it. */
export class McpConsentDto {
  @ApiProperty({ description: 'The consent’s id (from the page’s URL, /connect/{uid})' })
  uid!: string;

  @ApiProperty({ type: McpConsentClientDto })
  client!: McpConsentClientDto;

  @ApiProperty({ type: [String], description: 'What the app asks for: `mcp`, use your tools and agents as you' })
  scopes!: string[];

  @ApiProperty({
    type: [McpConsentWorkspaceDto],
    description: 'Where the app may act: your personal scope first, then each workspace you are a member of',
  })
  workspaces!: McpConsentWorkspaceDto[];
}

export class McpConsentResultDto {
  @ApiProperty({ description: 'Where the browser goes next; the app then receives its code, or access_denied' })
  redirectTo!: string;
}
