/**
 * Passkey ceremonies (WebAuthn) for console admins, by `@simplewebauthn/server` (ADR 32).
 *
 * - The relying party is WSOPS_BASE_URL: its host name is the RP ID, its origin the only origin
 *   accepted. A passkey answer signed for another origin (a look-alike site relaying the
 *   prompt) is refused and says so.
 * - Each ceremony's challenge is stored for the console session and purpose that asked for it,
 *   taken (deleted) before anything else is checked, so it is used once whatever the outcome,
 *   and refused after CHALLENGE_LIFE_MS.
 * - The signature counter is checked here, after the signature: a counter that does not move
 *   forward (when the authenticator keeps one) means a copied authenticator, and is refused.
 *
 * Every refusal is a PasskeyRefusal whose message says what was wrong and what to do.
 */
import { isIP } from 'node:net';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  VerifiedAuthenticationResponse,
  VerifiedRegistrationResponse,
} from '@simplewebauthn/server';
import type { Kysely } from '#kysely';
import type { DB } from '../store/schema.js';
import {
  type ChallengePurpose,
  findPasskey,
  issueChallenge,
  type NewPasskey,
  type PasskeyRow,
  recordPasskeyUse,
  takeChallenge,
} from './passkeys.js';

/**
 * The library, loaded at the first ceremony: with the certificate parsers it brings it is about
 * 300 modules, which every `wsops serve` start paid before (ADR 37).
 */
const simpleWebAuthn = () => import('@simplewebauthn/server');

/** How long a passkey prompt may stay open (also the browser's timeout). */
export const CHALLENGE_LIFE_MS = 5 * 60_000;

export class PasskeyRefusal extends Error {}

export interface Ceremony {
  db: Kysely<DB>;
  baseUrl: string;
  /** The console session the challenge belongs to (pending at sign-in). */
  sessionId: string;
  now: number;
}

interface RelyingParty {
  id: string;
  origin: string;
}

function relyingParty(baseUrl: string): RelyingParty {
  const url = new URL(baseUrl);
  return { id: url.hostname, origin: url.origin };
}

/**
 * Why browsers will not make or use a passkey for this console, or undefined when they will:
 * the RP ID must be a domain name (not an IP address), in a secure context (https, or localhost).
 */
export function passkeysUnavailable(baseUrl: string): string | undefined {
  const url = new URL(baseUrl);
  if (isIP(url.hostname.replace(/^\[|\]$/g, ''))) {
    return `Passkeys need the console to be reached by a domain name: WSOPS_BASE_URL is ${baseUrl}, an IP address, which browsers refuse for passkeys. Your operator can set WSOPS_BASE_URL to the console's domain name.`;
  }
  const local = url.hostname === 'localhost' || url.hostname.endsWith('.localhost');
  if (url.protocol !== 'https:' && !local) {
    return `Passkeys need the console over https: WSOPS_BASE_URL is ${baseUrl}. Your operator can serve the console over https and set WSOPS_BASE_URL to match.`;
  }
  return undefined;
}

const transportsOf = (p: PasskeyRow) => (p.transports ? p.transports.split(' ') : undefined);

/** Options for navigator.credentials.create(); the challenge is stored for this session. */
export async function registrationOptions(
  c: Ceremony,
  admin: { id: string; email: string },
  existing: PasskeyRow[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingParty(c.baseUrl);
  const { generateRegistrationOptions } = await simpleWebAuthn();
  const options = await generateRegistrationOptions({
    rpName: `wsops console (${rp.id})`,
    rpID: rp.id,
    userName: admin.email,
    userDisplayName: admin.email,
    userID: new TextEncoder().encode(admin.id),
    timeout: CHALLENGE_LIFE_MS,
    attestationType: 'none',
    // The browser refuses an authenticator that already holds one of this admin's passkeys.
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await issueChallenge(c.db, {
    challenge: options.challenge,
    sessionId: c.sessionId,
    purpose: 'register',
    now: c.now,
    lifeMs: CHALLENGE_LIFE_MS,
  });
  return options;
}

/** Options for navigator.credentials.get() with the admin's passkeys; the challenge is stored for this session. */
export async function assertionOptions(
  c: Ceremony,
  purpose: Exclude<ChallengePurpose, 'register'>,
  passkeys: PasskeyRow[],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await simpleWebAuthn();
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(c.baseUrl).id,
    allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    timeout: CHALLENGE_LIFE_MS,
    userVerification: 'preferred',
  });
  await issueChallenge(c.db, { challenge: options.challenge, sessionId: c.sessionId, purpose, now: c.now, lifeMs: CHALLENGE_LIFE_MS });
  return options;
}

const UNREADABLE =
  'The passkey’s answer could not be read. Try again; if it keeps failing, use a code from your authenticator app or a recovery code.';

/** The browser's answer (JSON, as console.js posts it) with its client data decoded. */
function parseAnswer<T extends { id: string; response: { clientDataJSON: string } }>(
  text: string,
): { answer: T; client: { type: string; challenge: string; origin: string } } {
  try {
    const answer = JSON.parse(text) as T;
    if (typeof answer?.id !== 'string' || typeof answer.response?.clientDataJSON !== 'string') throw new Error('shape');
    const client = JSON.parse(Buffer.from(answer.response.clientDataJSON, 'base64url').toString('utf8'));
    if (typeof client?.challenge !== 'string' || typeof client.origin !== 'string' || typeof client.type !== 'string')
      throw new Error('shape');
    return { answer, client };
  } catch {
    throw new PasskeyRefusal(UNREADABLE);
  }
}

/** The checks before the signature: the challenge (taken, so used once) and the origin. */
async function checkChallengeAndOrigin(
  c: Ceremony,
  purpose: ChallengePurpose,
  client: { challenge: string; origin: string },
): Promise<RelyingParty> {
  const taken = await takeChallenge(c.db, { challenge: client.challenge, sessionId: c.sessionId, purpose, now: c.now });
  if (taken === 'unknown') {
    throw new PasskeyRefusal(
      'This passkey answer was already used, or was not asked for on this page. Nothing was accepted; try again from this page.',
    );
  }
  if (taken === 'expired') {
    throw new PasskeyRefusal(`The passkey prompt was open for more than ${CHALLENGE_LIFE_MS / 60_000} minutes and expired. Try again.`);
  }
  const rp = relyingParty(c.baseUrl);
  if (client.origin !== rp.origin) {
    throw new PasskeyRefusal(
      `This passkey answer was made for another site (${client.origin.slice(0, 200)}), not for this console (${rp.origin}). It was refused: only use your passkey at ${rp.origin}.`,
    );
  }
  return rp;
}

/** Checks a registration answer; returns the credential to store. */
export async function verifyRegistration(c: Ceremony, text: string): Promise<NewPasskey> {
  const { answer, client } = parseAnswer<RegistrationResponseJSON>(text);
  const rp = await checkChallengeAndOrigin(c, 'register', client);
  const { verifyRegistrationResponse } = await simpleWebAuthn();
  let result: VerifiedRegistrationResponse;
  try {
    result = await verifyRegistrationResponse({
      response: answer,
      expectedChallenge: client.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      // The password is the first factor; possession of the passkey is the second.
      requireUserVerification: false,
    });
  } catch (err) {
    throw new PasskeyRefusal(`The new passkey could not be verified (${(err as Error).message}). Try again, or use another authenticator.`);
  }
  if (!result.verified) throw new PasskeyRefusal('The new passkey could not be verified. Try again, or use another authenticator.');
  const { credential } = result.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: (credential.transports ?? []).filter((t) => /^[a-z-]{1,20}$/.test(t)),
  };
}

/**
 * Checks an assertion by one of the admin's passkeys for `purpose`, and records its use (new
 * counter, time). Returns the passkey used.
 */
export async function verifyAssertion(
  c: Ceremony,
  adminId: string,
  purpose: Exclude<ChallengePurpose, 'register'>,
  text: string,
): Promise<PasskeyRow> {
  const { answer, client } = parseAnswer<AuthenticationResponseJSON>(text);
  const rp = await checkChallengeAndOrigin(c, purpose, client);
  const passkey = await findPasskey(c.db, adminId, answer.id);
  if (!passkey) {
    throw new PasskeyRefusal(
      'That passkey is not one of yours here (it may have been removed). Choose another passkey, or use a code from your authenticator app or a recovery code.',
    );
  }
  const { verifyAuthenticationResponse } = await simpleWebAuthn();
  let result: VerifiedAuthenticationResponse;
  try {
    result = await verifyAuthenticationResponse({
      response: answer,
      expectedChallenge: client.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      // Counter 0: the library's own counter rule is off; ours runs below, after the signature.
      credential: { id: passkey.credential_id, publicKey: Buffer.from(passkey.public_key, 'base64url'), counter: 0 },
      requireUserVerification: false,
    });
  } catch (err) {
    throw new PasskeyRefusal(`The passkey’s signature could not be verified (${(err as Error).message}). Try again.`);
  }
  if (!result.verified) throw new PasskeyRefusal('The passkey’s signature could not be verified. Try again.');
  const presented = result.authenticationInfo.newCounter;
  // Authenticators that keep no counter always send 0; one that keeps one must move it forward.
  const regressed = (presented > 0 || passkey.counter > 0) && presented <= passkey.counter;
  if (
    regressed ||
    !(await recordPasskeyUse(c.db, {
      credentialId: passkey.credential_id,
      checkedCounter: passkey.counter,
      newCounter: presented,
      now: c.now,
    }))
  ) {
    throw new PasskeyRefusal(
      `The passkey “${passkey.name}” sent a signature counter of ${presented}, not above the ${passkey.counter} it reached before: it may have been copied (a cloned authenticator). It was refused. If you did not expect this, remove that passkey and register it again.`,
    );
  }
  return passkey;
}
