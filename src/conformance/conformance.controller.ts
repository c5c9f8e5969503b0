import { Body, Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, Public } from '../auth/decorators.js';
import { ApiErrors } from '../common/api-errors.js';
import { PUBLIC_ERRORS, SIGNED_IN_ERRORS } from '../common/api-schemas.js';
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
  @ApiBearerAuth()
  @ApiOperation({
    summary:
      "Check a site's conformance (manifest, HTTPS, tool endpoints, limits, OAuth) as agentsite-check does; " +
      'rules needing a consent-page sign-in are skipped here (use the CLI)',
  })
  @ApiOkResponse({ type: ConformanceReportDto })
  @ApiErrors(...SIGNED_IN_ERRORS)
  check(@CurrentUser() user: AuthUser, @Body() body: ConformanceCheckDto): Promise<ConformanceReportDto> {
    return this.conformance.check(user.user.id, body);
  }
}
