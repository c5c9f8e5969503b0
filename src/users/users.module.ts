import { Module } from '@nestjs/common';
import { AdminController } from '../admin/admin.controller.js';
import { DatabaseModule } from '../database/database.module.js';
import { CreditsService } from '../credits/credits.service.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [DatabaseModule],
  controllers: [AdminController],
  providers: [UsersService, CreditsService],
  exports: [UsersService],
})
export class UsersModule {}
