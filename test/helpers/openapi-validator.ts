import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
  components: { responses: Record<string, Record<string, unknown>> };
};

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
}
