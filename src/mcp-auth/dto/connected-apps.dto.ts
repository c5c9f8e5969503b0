import { ApiProperty } from '@nestjs/swagger';

export class ConnectedAppWorkspaceDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;
}

/** An MCP client the user connected (one grant). */
export class ConnectedAppDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'The client_id (a URL for a client described by a Client ID Metadata Document)' })
  clientId!: string;

  @ApiProperty({ description: 'The name the app gave itself when it was connected' })
  clientName!: string;

  @ApiProperty({ description: 'The host its browser flow returned to', example: 'localhost:33418' })
  redirectHost!: string;

  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' } },
    required: ['id', 'name'],
    description: 'The Team workspace it acts in; null: your personal scope',
  })
  workspace!: ConnectedAppWorkspaceDto | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Its last call to /mcp (to the minute)',
  })
  lastUsedAt!: string | null;
}

export class ConnectedAppListDto {
  @ApiProperty({ type: [ConnectedAppDto] })
  apps!: ConnectedAppDto[];
}
