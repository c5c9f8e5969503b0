import { Body, Controller, Get, HttpCode, HttpStatus, Ip, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { type UserResponse, UsersService } from '../users/users.service.js';
import type { AuthUser } from './auth-user.js';
import { AuthService, type SessionAnswer } from './auth.service.js';
import { CurrentUser, Public } from './decorators.js';
import { AcceptTermsDto, LoginDto, RegisterDto } from './dto/auth.dto.js';

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('register')
  @ApiOperation({ summary: 'Create an account; answers a JWT (RATE_LIMITED past the sign-in limits)' })
  register(@Body() body: RegisterDto, @Ip() address: string | undefined): Promise<SessionAnswer> {
    return this.auth.register(body, address ?? 'unknown');
  }

  @Public()
  @Post('login')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Log in; answers a JWT (UNAUTHORIZED on wrong credentials, RATE_LIMITED past the sign-in limits)',
  })
  login(@Body() body: LoginDto, @Ip() address: string | undefined): Promise<SessionAnswer> {
    return this.auth.login(body, address ?? 'unknown');
  }

  @Post('logout')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Revoke the token of this request' })
  logout(@CurrentUser() user: AuthUser): Promise<void> {
    return this.auth.logout(user);
  }

  @Post('logout-all')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Revoke every token of the user issued before now (all devices)' })
  logoutAll(@CurrentUser() user: AuthUser): Promise<void> {
    return this.auth.logoutAll(user);
  }

  @Post('accept-terms')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Accept the terms of service (needed by vault, sessions, agents, runs, workspaces, billing)',
  })
  acceptTerms(@CurrentUser() user: AuthUser, @Body() body: AcceptTermsDto): Promise<{ acceptedTermsAt: string }> {
    return this.auth.acceptTerms(user, body.version);
  }
}

@ApiTags('auth')
@Controller('me')
export class MeController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @ApiBearerAuth()
  @ApiOperation({ summary: 'The authenticated user' })
  me(@CurrentUser() user: AuthUser): UserResponse {
    return this.users.toResponse(user.user);
  }
}
