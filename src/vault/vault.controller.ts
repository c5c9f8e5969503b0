import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/decorators.js';
import { ListQueryDto, type Page, pageQuery } from '../common/pagination.js';
import { OAuthService } from '../oauth/oauth.service.js';
import { ToolCaller, type ToolCallResult } from '../tools/tool-caller.js';
import { AddSiteDto, OAuthStartDto, StoreTokenDto, ToolCallDto } from './dto/vault.dto.js';
import { type SiteResponse, type TokenAnswer, VaultService } from './vault.service.js';

@ApiTags('vault')
@ApiBearerAuth()
@Controller('vault/sites')
export class VaultController {
  constructor(
    private readonly vault: VaultService,
    private readonly oauth: OAuthService,
    private readonly tools: ToolCaller,
  ) {}

  @Post()
  @ApiOperation({
    summary:
      'Add a site: fetch and validate its manifest (INVALID_URL, MANIFEST_NOT_FOUND, MANIFEST_INVALID, VAULT_LIMIT_REACHED)',
  })
  add(@CurrentUser() auth: AuthUser, @Body() body: AddSiteDto): Promise<SiteResponse> {
    return this.vault.add(auth.user, body.url);
  }

  @Get()
  @ApiOperation({ summary: 'The sites in your vault' })
  list(@CurrentUser() auth: AuthUser, @Query() query: ListQueryDto): Promise<Page<SiteResponse>> {
    return this.vault.list(auth.user.id, pageQuery(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One site, with its tools, their scopes and the credential (as a hint)' })
  async get(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<SiteResponse> {
    return this.vault.describe(await this.vault.findOwnedOrFail(auth.user.id, id));
  }

  @Post(':id/manifest/refresh')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Fetch the manifest again' })
  async refresh(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<SiteResponse> {
    return this.vault.refreshManifest(await this.vault.findOwnedOrFail(auth.user.id, id));
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove the site; its credentials are destroyed' })
  async remove(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<void> {
    await this.vault.remove(await this.vault.findOwnedOrFail(auth.user.id, id));
  }

  @Post(':id/token')
  @ApiOperation({ summary: 'Store a bearer token (TOKEN_EXISTS if a credential is stored)' })
  async storeToken(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Body() body: StoreTokenDto,
  ): Promise<TokenAnswer> {
    return this.vault.storeToken(await this.vault.findOwnedOrFail(auth.user.id, id), body.token, body.expiresAt);
  }

  @Patch(':id/token')
  @ApiOperation({ summary: 'Replace the stored token (NOT_FOUND if none)' })
  async replaceToken(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Body() body: StoreTokenDto,
  ): Promise<TokenAnswer> {
    return this.vault.replaceToken(await this.vault.findOwnedOrFail(auth.user.id, id), body.token, body.expiresAt);
  }

  @Delete(':id/token')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete the stored credential' })
  async deleteToken(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<void> {
    await this.vault.deleteToken(await this.vault.findOwnedOrFail(auth.user.id, id));
  }

  @Post(':id/oauth/start')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Start an OAuth 2.0 + PKCE connection; scopes are the least the named tools need' })
  async oauthStart(@CurrentUser() auth: AuthUser, @Param('id') id: string, @Body() body: OAuthStartDto) {
    return this.oauth.start(auth.user.id, await this.vault.findOwnedOrFail(auth.user.id, id), body.tools);
  }

  @Post(':id/tools/:tool/call')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Call a tool of the site with the stored credential' })
  async call(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Param('tool') tool: string,
    @Body() body: ToolCallDto,
  ): Promise<Omit<ToolCallResult, 'refreshed'>> {
    const site = await this.vault.findOwnedOrFail(auth.user.id, id);
    const { result, durationMs } = await this.tools.call({ site, tool, input: body.input });
    return { result, durationMs };
  }
}
