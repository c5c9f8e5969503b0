import { type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { CodecCorsMiddleware } from './codec-cors.middleware.js';
import { TemporalCodecController } from './temporal-codec.controller.js';
import { TemporalCodecService } from './temporal-codec.service.js';

/** The Temporal codec endpoint (API only): operators decode encrypted runs in the Temporal UI and CLI. */
@Module({
  controllers: [TemporalCodecController],
  providers: [TemporalCodecService],
})
export class TemporalCodecModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(CodecCorsMiddleware).forRoutes(TemporalCodecController);
  }
}
