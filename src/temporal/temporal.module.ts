import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Client, Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { SEARCH_ATTRIBUTE_TYPES } from '../../workflows/contracts.js';
import { temporalConnectionOptions } from './temporal-connection.js';
import { temporalClientDataConverter, temporalPayloadCodec } from './payload-codec.js';
import { tracingClientInterceptors } from './temporal-tracing.js';

export const TEMPORAL_CONNECTION = Symbol('TEMPORAL_CONNECTION');
export const TEMPORAL_CLIENT = Symbol('TEMPORAL_CLIENT');
/** The payload codec (TEMPORAL_CODEC_KEY), for code that reads raw history or serves the codec endpoint. */
export const TEMPORAL_PAYLOAD_CODEC = Symbol('TEMPORAL_PAYLOAD_CODEC');

/** Registers the search attributes runs carry, on servers that do not have them yet (an external cluster). */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.keys(SEARCH_ATTRIBUTE_TYPES).filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length > 0) {
    // IndexedValueType 2 = KEYWORD, 7 = KEYWORD_LIST.
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(
        missing.map((name) => [name, SEARCH_ATTRIBUTE_TYPES[name] === 'KEYWORD_LIST' ? 7 : 2]),
      ),
    });
  }
  return missing;
}

@Injectable()
class TemporalLifecycle implements OnApplicationShutdown {
  constructor(@Inject(TEMPORAL_CONNECTION) private readonly connection: Connection) {}

  async onApplicationShutdown(): Promise<void> {
    await this.connection.close();
  }
}

/** The largest answer the client takes from Temporal (a page of history), instead of gRPC's 4 MB. */
const MAX_HISTORY_PAGE_BYTES = 128 * 1024 * 1024;

/**
 * The Temporal client. The connection is lazy: the API starts (and reports Temporal as down in
 * /api/health) even while the Temporal server is not reachable yet.
 */
@Global()
@Module({
  providers: [
    {
      provide: TEMPORAL_CONNECTION,
      inject: [SETTINGS],
      useFactory: (settings: Settings): Connection =>
        Connection.lazy({
          ...temporalConnectionOptions(settings),
          connectTimeout: '5 seconds',
          // A page of history (a run's timeline, its archive) can be larger than gRPC's default 4 MB:
          // the server sends what the history holds, up to its own limits.
          channelArgs: { 'grpc.max_receive_message_length': MAX_HISTORY_PAGE_BYTES },
        }),
    },
    {
      provide: TEMPORAL_CLIENT,
      inject: [TEMPORAL_CONNECTION, SETTINGS],
      useFactory: async (connection: Connection, settings: Settings): Promise<Client> =>
        new Client({
          connection,
          namespace: settings.temporalNamespace,
          dataConverter: temporalClientDataConverter(settings),
          interceptors: await tracingClientInterceptors(settings),
        }),
    },
    {
      provide: TEMPORAL_PAYLOAD_CODEC,
      inject: [SETTINGS],
      useFactory: (settings: Settings): PayloadCodec => temporalPayloadCodec(settings),
    },
    TemporalLifecycle,
  ],
  exports: [TEMPORAL_CONNECTION, TEMPORAL_CLIENT, TEMPORAL_PAYLOAD_CODEC],
})
export class TemporalModule {}
