/**
 * HTML built with a tagged template that escapes every interpolated value unless it is
 * already `Html`. Markup typed by a user (a key name, a URL) can therefore only ever reach a
 * page as text. Type-checked by tsc like any other code; nothing is compiled at start.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] as string);
}

/** One interpolated value: Html as is, arrays joined, null/undefined/false as nothing, the rest escaped. */
function part(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += part(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Trusted markup only (never user input). */
export function raw(markup: string): Html {
  return new Html(markup);
}

/** Data for console.js as JSON inside <script type="application/json">: `<`, `>`, `&` escaped so no text can close the element. */
export function jsonScript(id: string, value: unknown): Html {
  const json = JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return html`<script type="application/json" id="${id}">${raw(json)}</script>`;
}
