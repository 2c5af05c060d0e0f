/**
 * The routing key (RabbitMQ) and subject (NATS) of a destination are templates: literal text
 * with placeholders `{type}` (the event type, e.g. `asset.assigned`), `{workspace}` (the
 * workspace id) and `{endpoint}` (the endpoint id). Checked at registration, so a delivery never
 * meets a template it cannot fill.
 */
import { AppError } from '../../errors.js';

export const DEFAULT_ROUTING_KEY = '{type}';
export const DEFAULT_SUBJECT = 'wsops.{workspace}.{type}';
export const PLACEHOLDERS = ['type', 'workspace', 'endpoint'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];
export type TemplateValues = Readonly<Record<Placeholder, string>>;

/** RabbitMQ routing keys are at most 255 bytes; NATS subjects have no hard limit, 255 keeps them readable. */
const MAX_TEMPLATE_LENGTH = 200;

function refuse(param: 'routing_key' | 'subject', message: string): AppError {
  return new AppError('invalid_parameter', `${param === 'subject' ? '--subject' : '--routing-key'} ${message}`, {
    param,
    rule: 'template',
  });
}

/**
 * Literal text allowed around the placeholders. Routing keys: letters, digits and `. _ - :`
 * (a topic exchange splits on dots). NATS subjects: the same, where a dot separates tokens and
 * no token may be empty; `*` and `>` are wildcards, never a subject one publishes to.
 */
const LITERAL = /^[A-Za-z0-9._:-]*$/;

export function checkTemplate(template: string, param: 'routing_key' | 'subject'): void {
  if (template.length > MAX_TEMPLATE_LENGTH) throw refuse(param, `must be at most ${MAX_TEMPLATE_LENGTH} characters`);
  const parts = template.split(/(\{[^{}]*\})/);
  for (const part of parts) {
    if (part.startsWith('{') && part.endsWith('}')) {
      const name = part.slice(1, -1);
      if (!(PLACEHOLDERS as readonly string[]).includes(name))
        throw refuse(param, `has an unknown placeholder ${part}; the placeholders are ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`);
    } else if (!LITERAL.test(part)) {
      throw refuse(
        param,
        `may hold letters, digits, . _ - : and the placeholders ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}; got "${template.slice(0, 60)}"`,
      );
    }
  }
  if (param === 'subject') {
    const sample = renderTemplate(template, { type: 'a.b', workspace: 'wsp_x', endpoint: 'we_x' });
    if (sample.split('.').some((token) => token === ''))
      throw refuse(param, 'must not have an empty token (a leading, trailing or double dot)');
  } else if (template.trim() === '') {
    throw refuse(param, 'must not be empty');
  }
}

/** Fills a checked template. */
export function renderTemplate(template: string, values: TemplateValues): string {
  return template.replace(/\{(type|workspace|endpoint)\}/g, (_, name: Placeholder) => values[name]);
}
