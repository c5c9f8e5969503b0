import { Global, Module } from '@nestjs/common';
import { loadSettings, type Settings } from './settings.js';

/** DI token for the validated settings object. */
export const SETTINGS = Symbol('SETTINGS');

@Global()
@Module({
  providers: [{ provide: SETTINGS, useFactory: (): Settings => loadSettings() }],
  exports: [SETTINGS],
})
export class SettingsModule {}
