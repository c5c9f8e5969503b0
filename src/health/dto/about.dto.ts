import { ApiProperty } from '@nestjs/swagger';

/** GET /api/about: what a visitor's console needs to know about this service before anyone signs in. */
export class AboutDto {
  @ApiProperty({
    type: 'string',
    nullable: true,
    format: 'uri',
    description:
      'The demo site this service runs beside it (`npm start` runs one), for a new user to add first; null when there is none',
    example: 'https://localhost:8443',
  })
  demoSiteUrl!: string | null;
}
