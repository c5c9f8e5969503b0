import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsObject, IsString, MaxLength, ValidateBy, ValidateNested } from 'class-validator';
import { Optional } from '../../common/optional.js';

/** Most payloads in one request (the Temporal UI sends one event's worth at a time). */
export const MAX_CODEC_PAYLOADS = 1000;
const MAX_METADATA_ENTRIES = 64;
const MAX_METADATA_KEY = 256;

/** Standard or URL-safe base64, padded or not (proto3 JSON writes `bytes` as standard base64). */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function isBase64(value: unknown): value is string {
  return typeof value === 'string' && BASE64.test(value) && value.replace(/=+$/, '').length % 4 !== 1;
}

/** `metadata`: an object of at most 64 entries, each a short key with a base64 value. */
function IsBase64Map(): PropertyDecorator {
  return ValidateBy({
    name: 'isBase64Map',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.keys(value).length <= MAX_METADATA_ENTRIES &&
        Object.entries(value).every(([key, v]) => key.length > 0 && key.length <= MAX_METADATA_KEY && isBase64(v)),
      defaultMessage: () =>
        `metadata must be an object of at most ${MAX_METADATA_ENTRIES} entries, each a key of 1 to ` +
        `${MAX_METADATA_KEY} characters with a base64 value`,
    },
  });
}

function IsBase64Bytes(): PropertyDecorator {
  return ValidateBy({
    name: 'isBase64Bytes',
    validator: { validate: isBase64, defaultMessage: () => 'data must be base64' },
  });
}

/** A Temporal Payload in proto3 JSON: metadata values and data are base64 bytes. */
export class CodecPayloadDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', format: 'byte' },
    description: 'Metadata entries (e.g. `encoding`), each value base64',
    example: { encoding: 'anNvbi9wbGFpbg==' },
  })
  @Optional()
  @IsObject()
  @IsBase64Map()
  metadata?: Record<string, string>;

  @ApiPropertyOptional({ type: 'string', format: 'byte', description: 'The payload bytes, base64' })
  @Optional()
  @IsString()
  @MaxLength(8 * 1024 * 1024)
  @IsBase64Bytes()
  data?: string;
}

/** The body Temporal's UI and CLI send to a codec server, and its answer (`{payloads: [...]}`). */
export class CodecPayloadsDto {
  @ApiProperty({ type: [CodecPayloadDto], maxItems: MAX_CODEC_PAYLOADS })
  @IsArray()
  @ArrayMaxSize(MAX_CODEC_PAYLOADS)
  // ValidateNested alone lets an array item that is itself an array through.
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => CodecPayloadDto)
  payloads!: CodecPayloadDto[];
}
