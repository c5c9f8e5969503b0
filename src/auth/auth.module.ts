import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module.js';
import { AuthController, MeController } from './auth.controller.js';
import { AuthRepository } from './auth.repository.js';
import { AuthService } from './auth.service.js';
import { ConsoleSessions } from './console-session.js';
import { AuthenticationBeforeBody } from './guards.js';
import { JwtStrategy } from './jwt.strategy.js';
import { LoginThrottle } from './login-throttle.js';
import { PasswordHasher } from './password.js';
import { RevokedTokenEntity } from './revoked-token.entity.js';
import { ApiRateLimits } from '../common/rate-limit.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([RevokedTokenEntity]),
    UsersModule,
    PassportModule,
    JwtModule.registerAsync({
      inject: [SETTINGS],
      useFactory: (settings: Settings) => ({
        secret: settings.jwtSecret,
        signOptions: { algorithm: 'HS256', expiresIn: settings.jwtTtlSeconds },
        verifyOptions: { algorithms: ['HS256'] },
      }),
    }),
  ],
  controllers: [AuthController, MeController],
  providers: [
    AuthService,
    AuthRepository,
    JwtStrategy,
    ApiRateLimits,
    PasswordHasher,
    LoginThrottle,
    AuthenticationBeforeBody,
    ConsoleSessions,
  ],
  // JwtModule: the MCP endpoint checks API tokens' signatures with the same JwtService.
  exports: [ApiRateLimits, JwtStrategy, AuthenticationBeforeBody, ConsoleSessions, JwtModule],
})
export class AuthModule {}
