import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AppError } from '../common/app-error.js';
import { PayloadDecryptionError } from '../temporal/payload-codec.js';
import { TEMPORAL_PAYLOAD_CODEC } from '../temporal/temporal.module.js';
import type { CodecPayloadDto, CodecPayloadsDto } from './dto/codec-payloads.dto.js';

function fromJson(payload: CodecPayloadDto): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): CodecPayloadDto {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

/** The codec endpoint's work: the service's payload codec over the JSON form Temporal's UI and CLI use. */
@Injectable()
export class TemporalCodecService {
  private readonly logger = new Logger('TemporalCodec');

  constructor(@Inject(TEMPORAL_PAYLOAD_CODEC) private readonly codec: PayloadCodec) {}

  async decode(body: CodecPayloadsDto): Promise<CodecPayloadsDto> {
    const out: CodecPayloadDto[] = [];
    for (const [index, payload] of body.payloads.entries()) {
      try {
        const [decoded] = await this.codec.decode([fromJson(payload)]);
        out.push(toJson(decoded!));
      } catch (err) {
        if (err instanceof PayloadDecryptionError) {
          // Key ids only: the operator learns which key is missing, the log gets no payload.
          this.logger.warn(`decode refused payloads[${index}]: ${err.message}`);
          throw AppError.validation([{ field: `payloads[${index}]`, message: err.message }]);
        }
        throw err;
      }
    }
    return { payloads: out };
  }

  async encode(body: CodecPayloadsDto): Promise<CodecPayloadsDto> {
    const encoded = await this.codec.encode(body.payloads.map(fromJson));
    return { payloads: encoded.map(toJson) };
  }
}
