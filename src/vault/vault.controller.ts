import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ListQueryDto, type Page, pageQuery } from '../common/pagination.js';
import { CurrentScope, requireRole, type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
import type { WorkspaceRole } from '../workspaces/workspace.entities.js';
import { AddSiteDto, StoreTokenDto } from './dto/vault.dto.js';
import type { SiteEntity } from './site.entity.js';
import { type SiteResponse, type TokenAnswer, VaultService } from './vault.service.js';
import { TermsRequired } from '../auth/decorators.js';

/**
 * In a workspace: viewers read, members call tools, admins manage sites and their credentials.
 * Two /vault/sites routes live with the features they drive: connecting by OAuth in
 * oauth/site-oauth.controller.ts, calling a tool in tools/site-tools.controller.ts.
 */
@ApiTags('vault')
@ApiBearerAuth()
@ApiHeader({ name: WORKSPACE_HEADER, required: false, description: "Act on a Team workspace's vault" })
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
      'Add a site: fetch and validate its manifest (INVALID_URL, MANIFEST_NOT_FOUND, MANIFEST_INVALID, VAULT_LIMIT_REACHED)',
  })
  add(@CurrentScope() scope: Scope, @Body() body: AddSiteDto): Promise<SiteResponse> {
    return this.vault.add(scope, body.url);
  }

  @Get()
  @ApiOperation({ summary: 'The sites in the vault' })
  list(@CurrentScope() scope: Scope, @Query() query: ListQueryDto): Promise<Page<SiteResponse>> {
    return this.vault.list(scope, pageQuery(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One site, with its tools, their scopes and the credential (as a hint)' })
  async get(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<SiteResponse> {
    return this.vault.describe(await this.site(scope, id, 'viewer', 'Reading a site'));
  }

  @Post(':id/share')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Move one of your sites into the workspace of X-Workspace-Id (WORKSPACE_REQUIRED without it)',
  })
  share(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<SiteResponse> {
    return this.vault.share(scope, id);
  }

  @Post(':id/manifest/refresh')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Fetch the manifest again' })
  async refresh(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<SiteResponse> {
    return this.vault.refreshManifest(await this.site(scope, id, 'admin', 'Refreshing a manifest'));
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove the site; its credentials are destroyed' })
  async remove(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<void> {
    await this.vault.remove(await this.site(scope, id, 'admin', 'Removing a site'));
  }

  @Post(':id/token')
  @ApiOperation({ summary: 'Store a bearer token (TOKEN_EXISTS if a credential is stored)' })
  async storeToken(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: StoreTokenDto,
  ): Promise<TokenAnswer> {
    return this.vault.storeToken(await this.site(scope, id, 'admin', 'Storing a token'), body.token, body.expiresAt);
  }

  @Patch(':id/token')
  @ApiOperation({ summary: 'Replace the stored token (NOT_FOUND if none)' })
  async replaceToken(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: StoreTokenDto,
  ): Promise<TokenAnswer> {
    return this.vault.replaceToken(
      await this.site(scope, id, 'admin', 'Replacing a token'),
      body.token,
      body.expiresAt,
    );
  }

  @Delete(':id/token')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete the stored credential' })
  async deleteToken(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<void> {
    await this.vault.deleteToken(await this.site(scope, id, 'admin', 'Deleting a token'));
  }
}
