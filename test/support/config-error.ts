import { expect } from 'vitest';
import { ConfigError } from '../../src/errors.js';

/** The ConfigError (E_CONFIG) that `load` throws; fails the test when it throws nothing or another error. */
export function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: 'E_CONFIG' });
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}
