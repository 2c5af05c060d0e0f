/** A console admin as the pages see it, and the rules of an admin's email address and stored tokens. */
import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import type { DB } from '../store/schema.js';
import { refuseUnsafeName } from '../text-rules.js';

export interface Admin {
  id: string;
  workspace_id: string;
  email: string;
  created_at: string;
  created_by: string;
  last_sign_in_at: string | null;
  /** False until the admin has followed their first link and chosen a password. */
  password_set: boolean;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function toAdmin(row: DB['console_admins']): Admin {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    email: row.email,
    created_at: row.created_at,
    created_by: row.created_by,
    last_sign_in_at: row.last_sign_in_at,
    password_set: row.password_hash !== null,
  };
}

/** Trims and lower-cases an address, or refuses it with a reason. */
export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0) throw new AppError('invalid_parameter', 'an email address is required', { param: 'email' });
  refuseUnsafeName(email, 'the email address', 'email');
  if (email.length > 254 || !/^[^\s@<>"(),;:]+@[^\s@<>"(),;:]+\.[^\s@<>"(),;:.]{2,}$/.test(email)) {
    throw new AppError('invalid_parameter', `"${raw.trim().slice(0, 254)}" is not an email address (expected name@example.com)`, {
      param: 'email',
    });
  }
  return email;
}
