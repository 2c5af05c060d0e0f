/**
 * Form fields with their label, hint and error next to them. A refused form is rendered again
 * with what the user typed and the error beside the field it concerns.
 */
import { type Html, html } from './html.js';

/** Errors by field name; `_form` for an error about the whole form. */
export type FieldErrors = Record<string, string>;

export interface FieldOptions {
  name: string;
  label: string;
  value?: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'datetime-local';
  hint?: string;
  errors?: FieldErrors;
  required?: boolean;
  attrs?: Html;
}

export function textField(o: FieldOptions): Html {
  const id = `f-${o.name}`;
  const error = o.errors?.[o.name];
  const describedBy = [o.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${error ? ' has-error' : ''}">
  <label for="${id}">${o.label}</label>
  ${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ''}
  <input id="${id}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}"${o.required ? html` required` : ''}${describedBy ? html` aria-describedby="${describedBy}"` : ''}${error ? html` aria-invalid="true"` : ''} ${o.attrs ?? ''}>
  ${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

/** The error about the whole form, shown above it. */
export function formError(errors?: FieldErrors): Html {
  const e = errors?._form;
  return e ? html`<p class="error form-error" role="alert">${e}</p>` : html``;
}

/** Reads a urlencoded body value as a string (the last one if repeated); '' when absent. */
export function formValue(body: unknown, name: string): string {
  const v = (body as Record<string, unknown> | null | undefined)?.[name];
  if (Array.isArray(v)) return String(v[v.length - 1] ?? '');
  return typeof v === 'string' ? v : '';
}

/** Reads every value of a repeated field (checkboxes). */
export function formValues(body: unknown, name: string): string[] {
  const v = (body as Record<string, unknown> | null | undefined)?.[name];
  if (Array.isArray(v)) return v.map(String);
  return typeof v === 'string' ? [v] : [];
}
