import { ApiProperty } from '@nestjs/swagger';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../workspace.entities.js';
import { ASSIGNABLE_ROLES, type AssignableRole } from './workspace.dto.js';
import type { InvitationResponse, MemberResponse, WorkspaceResponse } from '../workspaces.service.js';

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

/**
 * A pending invitation to a workspace. Inviting answers the same fields whether or not an account has
 * the email: nothing in it says whether the address is registered.
 */
export class InvitationResponseDto implements InvitationResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  workspaceId!: string;

  @ApiProperty()
  workspaceName!: string;

  @ApiProperty({ description: 'The invited address, trimmed and lower-cased' })
  email!: string;

  @ApiProperty({ enum: ASSIGNABLE_ROLES, description: 'The role the invited user gets on accepting' })
  role!: AssignableRole;

  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'Who invited (null once deleted)' })
  invitedBy!: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: "The inviter's email (null once deleted)" })
  invitedByEmail!: string | null;

  @ApiProperty({ format: 'date-time', description: 'When it was sent (or last renewed by inviting again)' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time', description: 'After this it can no longer be accepted' })
  expiresAt!: string;
}

/** Pending invitations: all of them, in one page (nextCursor is always null). */
export class InvitationListDto {
  @ApiProperty({ type: [InvitationResponseDto] })
  items!: InvitationResponseDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Always null: the list is not paged' })
  nextCursor!: null;
}
