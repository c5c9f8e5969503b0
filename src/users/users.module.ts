import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreditsModule } from '../credits/credits.module.js';
import { UserEntity } from './user.entity.js';
import { UsersService } from './users.service.js';

/**
 * Users and their accounts. Exports the users' repository too (TypeOrmModule): AuthService still
 * reads and writes `users` through it (issue #19 item 2 moves that behind a users repository).
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity]), CreditsModule],
  providers: [UsersService],
  exports: [UsersService, TypeOrmModule],
})
export class UsersModule {}
