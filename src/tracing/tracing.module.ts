import { Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { activeTracing } from './tracing.js';

/** Sends the spans still buffered when the application closes (the batch goes out every few seconds). */
@Injectable()
class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await activeTracing()?.shutdown();
  }
}

/**
 * Tracing itself is started by the entry point, before Nest (startTracing): this module only ends it
 * with the application. Without OTEL_EXPORTER_OTLP_ENDPOINT it does nothing.
 */
@Module({ providers: [TracingShutdown] })
export class TracingModule {}
