import { ApiProperty } from '@nestjs/swagger';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../workspace.entities.js';
import type { MemberResponse, WorkspaceResponse } from '../workspaces.service.js';

export class WorkspaceResponseDto implements WorkspaceResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ format: 'uuid' })
  ownerId!: string;

  @ApiProperty({ enum: WORKSPACE_ROLES, enumName: 'WorkspaceRole', description: "The caller's role in it" })
  role!: WorkspaceRole;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class MemberResponseDto implements MemberResponse {
  @ApiProperty({ format: 'uuid' })
  userId!: string;

  @ApiProperty()
  email!: string;

  @ApiProperty({ type: 'string', nullable: true })
  name!: string | null;

  @ApiProperty({ enum: WORKSPACE_ROLES, enumName: 'WorkspaceRole' })
  role!: WorkspaceRole;

  @ApiProperty({ format: 'date-time' })
  joinedAt!: string;
}

/** The caller's workspaces: all of them, in one page (nextCursor is always null). */
export class WorkspaceListDto {
  @ApiProperty({ type: [WorkspaceResponseDto] })
  items!: WorkspaceResponseDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Always null: the list is not paged' })
  nextCursor!: null;
}

/** A workspace's members: all of them, in one page (nextCursor is always null). */
export class MemberListDto {
  @ApiProperty({ type: [MemberResponseDto] })
  items!: MemberResponseDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Always null: the list is not paged' })
  nextCursor!: null;
}
