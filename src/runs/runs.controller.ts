import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/decorators.js';
import { type RunResponse, RunsService } from './runs.service.js';

@ApiTags('runs')
@ApiBearerAuth()
@Controller('runs')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  @Get(':id')
  @ApiOperation({ summary: 'A run with its timeline (read from its Temporal workflow history)' })
  async get(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<RunResponse> {
    return this.runs.describe(await this.runs.findOwnedOrFail(auth.user.id, id));
  }

  @Post(':id/cancel')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Cancel a queued or active run (RUN_NOT_CANCELLABLE once it ended)' })
  async cancel(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<RunResponse> {
    return this.runs.cancel(await this.runs.findOwnedOrFail(auth.user.id, id));
  }
}
