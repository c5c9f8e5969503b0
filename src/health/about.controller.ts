import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/decorators.js';
import { ApiErrors } from '../common/api-errors.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { AboutDto } from './dto/about.dto.js';

/** Public, read-only facts about the service for the console's signed-out landing (no secret, no user data). */
@ApiTags('health')
@Controller('about')
export class AboutController {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  @Public()
  @Get()
  @ApiOperation({
    summary: 'What the console shows a first-time visitor: the demo site to add first, when this service runs one',
  })
  @ApiOkResponse({ type: AboutDto })
  @ApiErrors('VALIDATION_ERROR', 'RATE_LIMITED')
  about(): AboutDto {
    return { demoSiteUrl: this.settings.demoSiteUrl ?? null };
  }
}
