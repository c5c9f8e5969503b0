import { Module } from '@nestjs/common';
import { AdminController } from '../admin/admin.controller.js';
import { DatabaseModule } from '../database/database.module.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [DatabaseModule],
  controllers: [AdminController],
  providers: [UsersService],
  exports: [UsersService],
})
export class UsersModule {}
