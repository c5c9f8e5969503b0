import { type DynamicModule, Module } from '@nestjs/common';
import { type Settings } from './settings.js';

/** DI token for the validated settings object. */
export const SETTINGS = Symbol('SETTINGS');

/**
 * The settings the entry point loaded (main.ts, worker.ts), handed to Nest as they are: a process
 * parses and validates its settings once, and a bad setting fails before Nest starts.
 */
@Module({})
export class SettingsModule {
  static forRoot(settings: Settings): DynamicModule {
    return {
      module: SettingsModule,
      global: true,
      providers: [{ provide: SETTINGS, useValue: settings }],
      exports: [SETTINGS],
    };
  }
}
