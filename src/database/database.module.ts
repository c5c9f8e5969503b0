import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { dataSourceOptions } from './data-source.js';

/**
 * The one PostgreSQL data source (its DataSource is global). Entities are not listed here: each
 * feature module registers its own with `TypeOrmModule.forFeature`, and `autoLoadEntities` adds them.
 * Imported once, by the root module of a process (AppModule, WorkerModule).
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [SETTINGS],
      useFactory: (settings: Settings) => ({ ...dataSourceOptions(settings), autoLoadEntities: true }),
    }),
  ],
})
export class DatabaseModule {}
