/**
 * Which characters text from outside may hold, declared once for the console, the CLI and the
 * internal API, and how the CLI shows text that slipped in before these rules.
 *
 * - No input value holds a control character (C0 but tab, line feed and carriage return; DEL;
 *   C1): PostgreSQL refuses NUL in text (SQLite stores it), and none is ever typed on purpose.
 * - A name, description or email holds none at all, nor a bidirectional embedding, override or
 *   isolate (U+202A–U+202E, U+2066–U+2069), nor a line or paragraph separator: such text is
 *   printed on operators' terminals, where ESC sequences clear the screen, set the title or
 *   write the clipboard (OSC 52), and a bidi override reorders what is shown.
 * - No key of request input (a JSON member, a form field, a SCIM path segment) is `__proto__`,
 *   `constructor` or `prototype`, in any letter case: code that sets a value by a path of keys
 *   reaches Object.prototype through them, and every object of the process sees what it sets
 *   (issue 56). No declared name is one of them, so refusing them refuses nothing legitimate.
 */
import { AppError } from './errors.js';

// Character classes as strings (a regex literal naming control characters is what lint flags).
const C0_BUT_LAYOUT = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f';
const C0 = '\\u0000-\\u001f';
const DEL_C1 = '\\u007f-\\u009f';
const BIDI = '\\u202a-\\u202e\\u2066-\\u2069';
const SEPARATORS = '\\u2028\\u2029';
/** Soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width and direction marks, word joiners, BOM. */
const INVISIBLE = '\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2060-\\u2065\\ufeff';

const CONTROL = new RegExp(`[${C0_BUT_LAYOUT}${DEL_C1}]`);
const NAME_UNSAFE = new RegExp(`[${C0}${DEL_C1}${SEPARATORS}${BIDI}]`);
/** Shown escaped on a terminal: every control, bidi control, separator and invisible format character. */
const UNPRINTABLE = new RegExp(`[${C0}${DEL_C1}${SEPARATORS}${BIDI}${INVISIBLE}]`, 'g');
/** Left raw by JSON.stringify, which escapes only C0 inside strings (raw C0 in its output is layout). */
const UNPRINTABLE_IN_JSON = new RegExp(`[${DEL_C1}${SEPARATORS}${BIDI}${INVISIBLE}]`, 'g');

/** `U+001B`: how a refused character is named in an error. */
function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The first control character of an input value, or undefined. */
export function controlCharacterIn(value: string): string | undefined {
  return CONTROL.exec(value)?.[0];
}

/** Refuses an input value (a form field, a query value, an argument) holding a control character. */
export function refuseControlCharacters(value: string, what: string, param?: string): void {
  const c = controlCharacterIn(value);
  if (c === undefined) return;
  throw new AppError(
    'invalid_parameter',
    `${what} contains the control character ${codePoint(c)}, which is not accepted; remove it and try again`,
    param ? { param } : {},
  );
}

/** Refuses a name, description or email holding a control, bidi-control or separator character. */
export function refuseUnsafeName(value: string, what: string, param?: string): void {
  const c = NAME_UNSAFE.exec(value)?.[0];
  if (c === undefined) return;
  throw new AppError(
    'invalid_parameter',
    `${what} contains the character ${codePoint(c)} (a control or text-direction character), which is not accepted; remove it and try again`,
    param ? { param } : {},
  );
}

/** Text safe to print on a terminal: every unprintable character as a visible `\u{1b}`. */
export function printable(text: string, keep: 'newlines' | 'nothing' = 'nothing'): string {
  return text.replace(UNPRINTABLE, (c) => (keep === 'newlines' && c === '\n' ? c : `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`));
}

/** JSON for a terminal: the characters JSON.stringify leaves raw (DEL, C1, bidi, separators) as \u escapes. */
export function printableJson(json: string): string {
  return json.replace(UNPRINTABLE_IN_JSON, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

const PROTOTYPE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether a key or path segment names an object's prototype (any letter case). */
export function namesPrototype(key: string): boolean {
  // Only the two lengths there are pay for the lower-casing.
  return (key.length === 9 || key.length === 11) && PROTOTYPE_NAMES.has(key.toLowerCase());
}

/** The names in any letter case, or a `\u` escape that could spell one. */
const PROTOTYPE_NAME_IN_JSON = /__proto__|constructor|prototype|\\u/i;

/** Whether JSON text may hold a key naming the prototype: a cheap test before walking what it parses to. */
export function mayNamePrototype(json: string): boolean {
  return PROTOTYPE_NAME_IN_JSON.test(json);
}

/** A JSON pointer's escaping of one key (RFC 6901). */
const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointer of the first key naming the prototype in parsed input (plain objects and
 * arrays, at any depth), or undefined. `keyIsHostile` widens the rule where a key is read as a
 * path (SCIM). Walked with a stack of its own: a deeply nested body must not exhaust the call stack.
 */
export function prototypeKeyIn(value: unknown, keyIsHostile: (key: string) => boolean = namesPrototype): string | undefined {
  type Frame = { value: unknown; pointer: string };
  const stack: Frame[] = [{ value, pointer: '' }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const v = frame.value;
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        if (typeof v[i] === 'object' && v[i] !== null) stack.push({ value: v[i], pointer: `${frame.pointer}/${i}` });
      }
      continue;
    }
    // Streams, buffers and other class instances are not parsed input; a parser's own
    // prototype-less objects (fast-querystring's) are.
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null && Object.getPrototypeOf(proto) !== null) continue;
    for (const key of Object.keys(v)) {
      if (keyIsHostile(key)) return `${frame.pointer}/${pointerKey(key)}`;
      const child = (v as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) stack.push({ value: child, pointer: `${frame.pointer}/${pointerKey(key)}` });
    }
  }
  return undefined;
}
