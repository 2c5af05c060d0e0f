import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
  webhooks: Record<string, { post: { parameters: { name: string; in: string; required: boolean; schema: object }[] } }>;
  components: { responses: Record<string, Record<string, unknown>> };
};

const pointerPart = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Validates real responses against the OpenAPI document the server serves: the path template,
 * the declared status, the content type and the body schema must all match.
 */
export class OpenApiValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly templates: { regex: RegExp; path: string }[];
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    (addFormats as unknown as (a: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(doc as object, 'openapi');
    this.templates = Object.keys(doc.paths).map((path) => ({
      path,
      regex: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  /** Returns false when the path is not part of the described API (nothing to check). */
  check(method: string, url: string, status: number, contentType: string | undefined, body: unknown): boolean {
    const pathname = new URL(url, 'http://x').pathname;
    // A concrete path (/api/v1/scopes) wins over a template (/api/v1/{id}).
    const template = this.templates.find((t) => t.path === pathname) ?? this.templates.find((t) => t.regex.test(pathname));
    if (!template) return false;
    const op = this.doc.paths[template.path]?.[method.toLowerCase()];
    assert.ok(op, `OpenAPI describes no ${method} ${template.path}`);
    let response = op.responses[String(status)];
    assert.ok(response, `OpenAPI declares no ${status} for ${method} ${template.path} (body: ${JSON.stringify(body).slice(0, 300)})`);
    const refName = typeof response.$ref === 'string' ? response.$ref.split('/').pop() : undefined;
    const pointer = refName
      ? `openapi#/components/responses/${refName}`
      : `openapi#/paths/${template.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${status}`;
    if (refName) response = this.doc.components.responses[refName] ?? {};
    const content = response.content as Record<string, unknown> | undefined;
    const mediaType = (contentType ?? '').split(';')[0]?.trim() ?? '';
    assert.ok(content?.[mediaType], `${method} ${template.path} ${status}: content type ${mediaType} is not declared`);
    const key = `${pointer}|${mediaType}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${pointer}/content/${mediaType.replace(/\//g, '~1')}/schema` });
      this.cache.set(key, validate);
    }
    assert.ok(validate(body), `${method} ${url} ${status} does not match OpenAPI: ${this.ajv.errorsText(validate.errors)}`);
    return true;
  }

  /**
   * Checks a received webhook delivery against the document's `webhooks` entry for its event
   * type: every declared header and the JSON body. Returns the problems found (none: valid).
   */
  checkWebhook(headers: Record<string, string | string[] | undefined>, rawBody: string): string[] {
    const type = headers['x-service-event'];
    if (typeof type !== 'string') return ['no X-Service-Event header'];
    const op = this.doc.webhooks[type]?.post;
    if (!op) return [`OpenAPI describes no webhook ${type}`];
    const problems: string[] = [];
    const base = `openapi#/webhooks/${pointerPart(type)}/post`;
    op.parameters.forEach((p, i) => {
      const value = headers[p.name.toLowerCase()];
      if (value === undefined) {
        if (p.required) problems.push(`header ${p.name} missing`);
        return;
      }
      const validate = this.compile(`${base}/parameters/${i}/schema`);
      if (!validate(value)) problems.push(`header ${p.name}: ${this.ajv.errorsText(validate.errors)}`);
    });
    if (headers['content-type'] !== 'application/json') problems.push(`content-type ${headers['content-type']}`);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return [...problems, 'body is not JSON'];
    }
    const validate = this.compile(`${base}/requestBody/content/application~1json/schema`);
    if (!validate(body)) problems.push(`${type} body: ${this.ajv.errorsText(validate.errors)}`);
    return problems;
  }

  private compile(pointer: string): ValidateFunction {
    let validate = this.cache.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: pointer });
      this.cache.set(pointer, validate);
    }
    return validate;
  }
}
