import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreditsModule } from '../credits/credits.module.js';
import { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/** Users and their accounts; other features read and write `users` rows through UsersService. */
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity]), CreditsModule],
  providers: [UsersService, UsersRepository],
  exports: [UsersService],
})
export class UsersModule {}
