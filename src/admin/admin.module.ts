import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { AdminController } from './admin.controller.js';

/** The operator's routes (/admin/users): a view over the users feature. */
@Module({
  imports: [UsersModule],
  controllers: [AdminController],
})
export class AdminModule {}
