import { Body, Controller, Get, HttpCode, HttpStatus, Ip, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import { UserResponseDto } from '../users/dto/user-response.dto.js';
import { UsersService } from '../users/users.service.js';
import type { AuthUser } from './auth-user.js';
import { AuthService } from './auth.service.js';
import { CurrentUser, Public } from './decorators.js';
import { AcceptTermsResponseDto, SessionResponseDto } from './dto/auth-responses.dto.js';
import { AcceptTermsDto, LoginDto, RegisterDto } from './dto/auth.dto.js';

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('register')
  @ApiOperation({ summary: 'Create an account; answers a JWT (RATE_LIMITED past the sign-in limits)' })
  @ApiCreatedResponse({ type: SessionResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'RATE_LIMITED')
  register(@Body() body: RegisterDto, @Ip() address: string | undefined): Promise<SessionResponseDto> {
    return this.auth.register(body, address ?? 'unknown');
  }

  @Public()
  @Post('login')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Log in; answers a JWT (UNAUTHORIZED on wrong credentials, RATE_LIMITED past the sign-in limits)',
  })
  @ApiOkResponse({ type: SessionResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'UNAUTHORIZED', 'RATE_LIMITED')
  login(@Body() body: LoginDto, @Ip() address: string | undefined): Promise<SessionResponseDto> {
    return this.auth.login(body, address ?? 'unknown');
  }

  @Post('logout')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Revoke the token of this request' })
  @ApiNoContentResponse({ description: 'The token is revoked' })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  logout(@CurrentUser() user: AuthUser): Promise<void> {
    return this.auth.logout(user);
  }

  @Post('logout-all')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Revoke every token of the user issued before now (all devices)' })
  @ApiNoContentResponse({ description: 'Every token issued until now is revoked' })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  logoutAll(@CurrentUser() user: AuthUser): Promise<void> {
    return this.auth.logoutAll(user);
  }

  @Post('accept-terms')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Accept the terms of service (needed by vault, sessions, agents, runs, workspaces, billing)',
  })
  @ApiOkResponse({ type: AcceptTermsResponseDto })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  acceptTerms(@CurrentUser() user: AuthUser, @Body() body: AcceptTermsDto): Promise<AcceptTermsResponseDto> {
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
  @ApiOkResponse({ type: UserResponseDto })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  me(@CurrentUser() user: AuthUser): UserResponseDto {
    return this.users.toResponse(user.user);
  }
}
