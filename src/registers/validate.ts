import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { AppError } from '../errors.js';
import { REGISTERS } from './catalogue.js';
import type { Register } from './define.js';

const ajv = new Ajv2020({ allErrors: false, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const validators = new Map(REGISTERS.map((r) => [r.path, ajv.compile(r.recordSchema())]));

/** Checks a whole record against its register's declaration; the message names the field. */
export function assertValidRecord(register: Register, record: Record<string, unknown>): void {
  const validate = validators.get(register.path);
  if (!validate || validate(record)) return;
  const err = validate.errors?.[0];
  const where = err?.instancePath ? err.instancePath.slice(1).replace(/\//g, '.') : 'record';
  const allowed = (err?.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
  const detail = allowed ? `must be one of ${allowed.filter((v) => v !== null).join(', ')}` : (err?.message ?? 'is invalid');
  throw new AppError('invalid_parameter', `${register.path}: ${where} ${detail}`, { param: where });
}
