/**
 * Passkeys (WebAuthn) of the signed-in admin: the list on the security page. Registration and
 * sign-in with a passkey are not built yet (see the report of issue 29).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../store/schema.js';
import type { PageContext } from '../context.js';
import { type Html, html } from '../html.js';
import { formatTime } from '../layout.js';

export interface PasskeyRow {
  credential_id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export async function listPasskeys(db: Kysely<DB>, adminId: string): Promise<PasskeyRow[]> {
  return db
    .selectFrom('admin_passkeys')
    .select(['credential_id', 'name', 'created_at', 'last_used_at'])
    .where('admin_id', '=', adminId)
    .orderBy('created_at')
    .execute();
}

export function passkeySection(_ctx: PageContext, passkeys: PasskeyRow[]): Html {
  if (passkeys.length === 0) return html``;
  return html`<section class="card stack" aria-labelledby="passkeys">
<h2 id="passkeys">Passkeys</h2>
<ul>${passkeys.map((p) => html`<li>${p.name}: added ${formatTime(p.created_at)}, last used ${formatTime(p.last_used_at, 'never')}</li>`)}</ul>
</section>`;
}
