import { AppError } from '../errors.js';
import { REGISTERS, registerByPath } from './catalogue.js';
import type { Register } from './define.js';

/** The register at a path, or a clear error that lists the registers there are. */
export function resolveRegister(path: string): Register {
  const register = registerByPath(path);
  if (!register) {
    throw new AppError('invalid_parameter', `unknown register "${path}"; registers are: ${REGISTERS.map((r) => r.path).join(', ')}`);
  }
  return register;
}
