import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { dataSourceOptions, ENTITIES } from './data-source.js';

/** TypeORM over the one PostgreSQL database; every entity's repository is available to feature modules. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [SETTINGS],
      useFactory: (settings: Settings) => dataSourceOptions(settings),
    }),
    TypeOrmModule.forFeature(ENTITIES),
  ],
  exports: [TypeOrmModule],
})
export class DatabaseModule {}
