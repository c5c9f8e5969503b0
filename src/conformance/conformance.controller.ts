import { Body, Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public, TermsRequired } from '../auth/decorators.js';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { PUBLIC_ERRORS, TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { CurrentScope, type Scope } from '../workspaces/scope.js';
import { MANIFEST_SCHEMA } from '../sites/manifest.js';
import { ConformanceService } from './conformance.service.js';
import { ConformanceReportDto } from './dto/conformance-response.dto.js';
import { ConformanceCheckDto } from './dto/conformance.dto.js';

@ApiTags('conformance')
@Controller('conformance')
export class ConformanceController {
  constructor(private readonly conformance: ConformanceService) {}

  @Public()
  @Get('manifest-schema')
  @ApiOperation({
    summary:
      'The JSON Schema of a site manifest (/.well-known/agentsite.json): the very schema the service validates ' +
      "manifests with (plus unique tool names, `required` naming declared properties, URLs on the site's domain)",
  })
  @ApiOkResponse({ description: 'A JSON Schema (draft-07)', schema: { type: 'object', additionalProperties: true } })
  @ApiErrors(...PUBLIC_ERRORS)
  manifestSchema(): typeof MANIFEST_SCHEMA {
    return MANIFEST_SCHEMA;
  }

  @Post('check')
  @HttpCode(HttpStatus.OK)
  @TermsRequired()
  @ApiBearerAuth()
  @ApiWorkspaceHeader('Check a site of this Team workspace’s vault instead of your own')
  @ApiOperation({
    summary:
      "Check the conformance (manifest, HTTPS, tool endpoints, limits, OAuth) of a site in the caller's vault as " +
      "agentsite-check does, within the vault's outgoing budget: at most the first 10 tools, rules needing a " +
      'consent-page sign-in skipped, and the rules past the outgoing limit skipped (use the CLI for any site)',
  })
  @ApiOkResponse({ type: ConformanceReportDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND', 'INVALID_URL', 'PERMISSION_DENIED', 'OUTGOING_RATE_LIMITED')
  check(@CurrentScope() scope: Scope, @Body() body: ConformanceCheckDto): Promise<ConformanceReportDto> {
    return this.conformance.check(scope, body);
  }
}
