import { AppError } from '../errors.js';
import type { Register } from './define.js';
import { readRecordInput } from './record-input.js';

/**
 * Checks a whole stored record (stamps included) by the same rules as a written one
 * (record-input.ts): a correction or a domain action can never store what a PUT would refuse.
 * The message names the field.
 */
export function assertValidRecord(register: Register, record: Record<string, unknown>): void {
  const result = readRecordInput(register, record, { keepTimestamps: true });
  if (result.ok) return;
  const first = result.problems[0] as { pointer: string; detail: string };
  const where = first.pointer ? first.pointer.slice(1).replace(/\//g, '.') : 'record';
  throw new AppError('invalid_parameter', `${register.path}: ${where} ${first.detail}`, { param: where });
}
