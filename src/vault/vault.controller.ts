import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { ListQueryDto, pageQuery } from '../common/pagination.js';
import { CurrentScope, requireRole, type Scope } from '../workspaces/scope.js';
import type { WorkspaceRole } from '../workspaces/workspace.entities.js';
import { SitePageDto, SiteResponseDto, TokenAnswerDto } from './dto/site-response.dto.js';
import { AddSiteDto, StoreTokenDto } from './dto/vault.dto.js';
import type { SiteEntity } from './site.entity.js';
import { VaultService } from './vault.service.js';
import { TermsRequired } from '../auth/decorators.js';

/**
 * In a workspace: viewers read, members call tools, admins manage sites and their credentials.
 * Two /vault/sites routes live with the features they drive: connecting by OAuth in
 * oauth/site-oauth.controller.ts, calling a tool in tools/site-tools.controller.ts.
 */
@ApiTags('vault')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('vault/sites')
export class VaultController {
  constructor(private readonly vault: VaultService) {}

  /** A site of the scope, after checking the caller's workspace role for the action. */
  private async site(scope: Scope, id: string, minimum: WorkspaceRole, action: string): Promise<SiteEntity> {
    requireRole(scope, minimum, action);
    return this.vault.findInScope(scope, id);
  }

  @Post()
  @ApiOperation({
    summary:
      'Add a site: fetch and validate its manifest, or list the tools of the MCP server at url (needs_connection when it asks for authorization first); INVALID_URL, MANIFEST_NOT_FOUND, MANIFEST_INVALID, VAULT_LIMIT_REACHED',
  })
  @ApiCreatedResponse({ type: SiteResponseDto })
  @ApiErrors(
    ...TERMS_GATED_ERRORS,
    'PERMISSION_DENIED',
    'INVALID_URL',
    'MANIFEST_NOT_FOUND',
    'MANIFEST_INVALID',
    'VAULT_LIMIT_REACHED',
    'SUBSCRIPTION_PAST_DUE',
  )
  add(@CurrentScope() scope: Scope, @Body() body: AddSiteDto): Promise<SiteResponseDto> {
    return this.vault.add(scope, body.url, body.protocol);
  }

  @Get()
  @ApiOperation({ summary: 'The sites in the vault' })
  @ApiOkResponse({ type: SitePageDto })
  @ApiErrors(...TERMS_GATED_ERRORS)
  list(@CurrentScope() scope: Scope, @Query() query: ListQueryDto): Promise<SitePageDto> {
    return this.vault.list(scope, pageQuery(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One site, with its tools, their scopes and the credential (as a hint)' })
  @ApiOkResponse({ type: SiteResponseDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND')
  async get(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<SiteResponseDto> {
    return this.vault.describe(await this.site(scope, id, 'viewer', 'Reading a site'));
  }

  @Post(':id/share')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Move one of your sites into the workspace of X-Workspace-Id (WORKSPACE_REQUIRED without it; VAULT_LIMIT_REACHED at the workspace owner’s vault limit)',
  })
  @ApiOkResponse({ type: SiteResponseDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND', 'PERMISSION_DENIED', 'VAULT_LIMIT_REACHED')
  share(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<SiteResponseDto> {
    return this.vault.share(scope, id);
  }

  @Post(':id/manifest/refresh')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Fetch the manifest again (MCP: list the tools again, unless the list is still fresh)' })
  @ApiOkResponse({ type: SiteResponseDto })
  @ApiErrors(
    ...TERMS_GATED_ERRORS,
    'NOT_FOUND',
    'PERMISSION_DENIED',
    'INVALID_URL',
    'MANIFEST_NOT_FOUND',
    'MANIFEST_INVALID',
  )
  async refresh(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<SiteResponseDto> {
    return this.vault.refreshManifest(await this.site(scope, id, 'admin', 'Refreshing a manifest'));
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove the site; its credentials are destroyed' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND', 'PERMISSION_DENIED')
  async remove(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<void> {
    await this.vault.remove(await this.site(scope, id, 'admin', 'Removing a site'));
  }

  @Post(':id/token')
  @ApiOperation({ summary: 'Store a bearer token (TOKEN_EXISTS if a credential is stored)' })
  @ApiCreatedResponse({ type: TokenAnswerDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND', 'PERMISSION_DENIED', 'TOKEN_EXISTS')
  async storeToken(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: StoreTokenDto,
  ): Promise<TokenAnswerDto> {
    return this.vault.storeToken(await this.site(scope, id, 'admin', 'Storing a token'), body.token, body.expiresAt);
  }

  @Patch(':id/token')
  @ApiOperation({ summary: 'Replace the stored token (NOT_FOUND if none)' })
  @ApiOkResponse({ type: TokenAnswerDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND', 'PERMISSION_DENIED')
  async replaceToken(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: StoreTokenDto,
  ): Promise<TokenAnswerDto> {
    return this.vault.replaceToken(
      await this.site(scope, id, 'admin', 'Replacing a token'),
      body.token,
      body.expiresAt,
    );
  }

  @Delete(':id/token')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete the stored credential' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND', 'PERMISSION_DENIED')
  async deleteToken(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<void> {
    await this.vault.deleteToken(await this.site(scope, id, 'admin', 'Deleting a token'));
  }
}
