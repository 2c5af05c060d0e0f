/**
 * Data: the workspace's records per register (how many, when last written), the last imports
 * with their counts and refusals, and a first load without a terminal: an admin uploads an
 * NDJSON or CSV file, sees the dry run's report (counts, refused lines with line, pointer and
 * reason) and confirms. The import itself is `importRecords`, as for the CLI and the internal
 * API; the actor recorded is `console:<email>`.
 *
 * Uploads are multipart forms (they work without JavaScript, like every console action), parsed
 * by @fastify/multipart in this page's own scope only (ADR 22): one file of at most
 * UPLOAD_LIMIT bytes, held in memory while it is checked or imported. The session is checked
 * before the body is read, so only a signed-in admin can make the server buffer a file. Nothing
 * is kept between the check and the import: the confirm form asks for the file again and
 * carries the SHA-256 of the checked bytes; another file is checked again, never imported
 * unseen.
 */
import { createHash } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { ConsoleServices, NavEntry } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type FieldErrors, formError } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { badge, csrfField, formatTime, layout, messagePage, scrollingTable, sendHtml } from '../../console-kit/layout.js';
import { registerTitle } from '../../console-kit/scopes.js';
import { AppError } from '../../errors.js';
import { registerByPath } from '../../registers/catalogue.js';
import type { Register } from '../../registers/define.js';
import { requireSession } from '../../sign-in/console-session.js';
import { csvOperations } from '../../writes/csv-operations.js';
import { EXPORT_ORDER, registerSummary } from '../../writes/export.js';
import { type ImportReport, importRecords, type RefusedLine } from '../../writes/import.js';
import { type ImportState, recentImports } from '../../writes/import-runs.js';
import { referrerLines } from '../../writes/referrers.js';

/** This page's entry in the console's main navigation. */
export const DATA_NAV: NavEntry = { key: 'data', label: 'Data', href: '/console/data' };

/** The largest file the console takes: a small organisation's first load; bigger loads stream through `wsops import`. */
export const UPLOAD_LIMIT = 20 * 1024 * 1024;
const UPLOAD_LIMIT_TEXT = '20 MiB';
/** Imports listed on the page, newest first. */
const RECENT_IMPORTS = 20;
/** Refused lines shown beside each listed import, and on a check's report. */
const REFUSALS_PER_IMPORT = 3;
const REFUSALS_ON_REPORT = 200;

interface Upload {
  name: string;
  type: string;
  bytes: Buffer;
}

interface UploadForm {
  file?: Upload;
  register: string;
  sha256: string;
}

/** The form's fields as multipart left them: text values, and the file as {name, type, bytes}. */
function uploadForm(body: unknown): UploadForm {
  const b = (body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof b[name] === 'string' ? (b[name] as string) : '');
  const f = b.file as Partial<Upload> | undefined;
  const file = f && Buffer.isBuffer(f.bytes) ? { name: String(f.name ?? ''), type: String(f.type ?? ''), bytes: f.bytes } : undefined;
  return { file, register: text('register'), sha256: text('sha256') };
}

const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The register a CSV file belongs to, or undefined for NDJSON; refuses a CSV without one. */
function csvRegister(form: UploadForm, file: Upload): Register | undefined {
  if (form.register === '') {
    if (/\.csv$/i.test(file.name) || file.type === 'text/csv') {
      throw new AppError('invalid_parameter', 'This looks like a CSV file: choose the register its rows belong to.', { param: 'register' });
    }
    return undefined;
  }
  const register = registerByPath(form.register);
  if (!register) throw new AppError('invalid_parameter', 'Choose one of the listed registers.', { param: 'register' });
  return register;
}

async function runImport(ctx: PageContext, file: Upload, register: Register | undefined, dryRun: boolean): Promise<ImportReport> {
  const bytes = (async function* () {
    yield file.bytes;
  })();
  return importRecords(ctx.services, ctx.admin.workspaceId, register ? csvOperations(bytes, register) : bytes, {
    actor: ctx.actor,
    dryRun,
  });
}

function countsTable(counts: ImportReport['counts'], caption: string): Html {
  const entries = Object.entries(counts);
  if (entries.length === 0) return html`<p class="muted">No records in the file.</p>`;
  return scrollingTable(
    caption,
    html`<table>
  <caption>${caption}</caption>
  <thead><tr><th scope="col">Register</th><th scope="col" class="num">Created</th><th scope="col" class="num">Updated</th><th scope="col" class="num">Unchanged</th><th scope="col" class="num">Deleted</th><th scope="col" class="num">Refused</th></tr></thead>
  <tbody>${entries.map(
    ([
      name,
      c,
    ]) => html`<tr><th scope="row">${registerTitle(name)}</th><td class="num">${c.upsert.created}</td><td class="num">${c.upsert.updated}</td>
<td class="num">${c.upsert.unchanged}</td><td class="num">${c.delete.deleted}</td><td class="num">${c.refused}</td></tr>`,
  )}</tbody>
</table>`,
  );
}

/** The first `limit` faults, in line order. */
const firstRefusals = (refused: readonly RefusedLine[], limit: number): RefusedLine[] =>
  [...refused].sort((a, b) => a.line - b.line).slice(0, limit);

function refusalList(refused: readonly RefusedLine[], limit: number): Html {
  return html`<ul class="plain refusals">${firstRefusals(refused, limit).map(
    (r) =>
      html`<li><strong>Line ${r.line}</strong>${r.pointer ? html` <code>${r.pointer}</code>` : ''} <code class="chip">${r.code}</code> ${r.detail}${
        r.referrers?.length
          ? html`<ul class="plain">${referrerLines(r.referrers).map((named) => html`<li>Still named by ${named}</li>`)}</ul>`
          : ''
      }</li>`,
  )}</ul>`;
}

/** Ids the file writes more than once, with both lines: each line is applied, the last one wins. */
function repeatedList(report: ImportReport): Html {
  if (!report.repeated_count) return html``;
  return html`<h3>${report.repeated_count} ${report.repeated_count === 1 ? 'line writes an id' : 'lines write an id'} an earlier line already wrote</h3>
<p class="hint">Each is applied in file order: the last line for an id wins. If that is not what you meant, keep one line per id.</p>
<ul class="plain refusals">${report.repeated
    .slice(0, REFUSALS_ON_REPORT)
    .map((r) => html`<li><strong>Line ${r.line}</strong> <code>${r.id}</code> first written at line ${r.first_line}</li>`)}</ul>`;
}

/** The upload form: on the Data page it checks a file; after a check it imports the same file. */
function uploadFields(ctx: PageContext, form: UploadForm, errors: FieldErrors): Html {
  const registerOptions = EXPORT_ORDER.map((name) => [name, registerTitle(name)] as const);
  const fileError = errors.file;
  const registerError = errors.register;
  return html`${csrfField(ctx)}
<div class="field${fileError ? ' has-error' : ''}">
  <label for="f-file">File</label>
  <p class="hint" id="f-file-hint">NDJSON (one operation a line, as <code>wsops export</code> writes) or CSV (the first row names the fields; lists as JSON in a cell). At most ${UPLOAD_LIMIT_TEXT}; for larger files use <code>wsops import</code>.</p>
  <input id="f-file" name="file" type="file" accept=".ndjson,.jsonl,.csv,application/x-ndjson,text/csv" required aria-describedby="f-file-hint${fileError ? ' f-file-error' : ''}"${fileError ? html` aria-invalid="true"` : ''}>
  ${fileError ? html`<p class="error" id="f-file-error">${fileError}</p>` : ''}
</div>
<div class="field${registerError ? ' has-error' : ''}">
  <label for="f-register">Register of a CSV file</label>
  <select id="f-register" name="register"${registerError ? html` aria-invalid="true" aria-describedby="f-register-error"` : ''}>
    <option value="">NDJSON file (each line names its register)</option>
    ${registerOptions.map(([v, l]) => html`<option value="${v}"${v === form.register ? html` selected` : ''}>${l}</option>`)}
  </select>
  ${registerError ? html`<p class="error" id="f-register-error">${registerError}</p>` : ''}
</div>`;
}

type StoredImport = Awaited<ReturnType<typeof recentImports>>[number];

function totals(report: StoredImport['report']): string {
  let created = 0;
  let updated = 0;
  let unchanged = 0;
  let deleted = 0;
  for (const c of Object.values(report.counts ?? {})) {
    created += c.upsert.created;
    updated += c.upsert.updated;
    unchanged += c.upsert.unchanged;
    deleted += c.delete.deleted;
  }
  return `${created} created, ${updated} updated, ${unchanged} unchanged, ${deleted} deleted`;
}

const STATE_BADGES: Record<ImportState, Html> = {
  interrupted: badge('bad', 'Interrupted'),
  failed: badge('bad', 'Failed'),
  running: badge('info', 'Running'),
  dry_run: badge('info', 'Dry run'),
  not_written: badge('bad', 'Not written'),
  imported: badge('good', 'Imported'),
};

function importState(i: StoredImport): Html {
  if (i.state === 'imported' && i.refused) return badge('warn', 'Imported, lines refused');
  return STATE_BADGES[i.state];
}

function importsSection(imports: readonly StoredImport[]): Html {
  const title = html`<h2 id="imports-title">Recent imports</h2>`;
  if (imports.length === 0) {
    return html`<section class="card" aria-labelledby="imports-title">${title}
<p class="empty">No imports yet. Check a file below, or use <code>wsops import</code> or the internal API.</p></section>`;
  }
  const rows = imports.map(
    (i) => html`<tr>
  <td>${formatTime(i.started_at)}</td>
  <td>${i.actor}</td>
  <td>${importState(i)}</td>
  <td class="num">${i.lines}</td>
  <td>${totals(i.report)}</td>
  <td class="num">${i.refused}</td>
  <td>${i.report.failure ? html`<p class="error">${i.report.failure}</p>` : ''}${i.refused ? refusalList((i.report.refused ?? []) as RefusedLine[], REFUSALS_PER_IMPORT) : ''}</td>
</tr>`,
  );
  return html`<section class="card" aria-labelledby="imports-title">${title}
${scrollingTable(
  'Recent imports',
  html`<table>
  <thead><tr><th scope="col">Started</th><th scope="col">By</th><th scope="col">Outcome</th><th scope="col" class="num">Lines</th><th scope="col">Records</th><th scope="col" class="num">Refused</th><th scope="col">First refused lines</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`,
)}</section>`;
}

async function renderDataPage(
  ctx: PageContext,
  options: { form?: UploadForm; errors?: FieldErrors; notice?: { kind: 'success' | 'error'; text: string } } = {},
): Promise<Html> {
  const { services } = ctx;
  const [summary, imports] = await Promise.all([
    registerSummary(services, ctx.admin.workspaceId),
    recentImports(services.database.db, ctx.admin.workspaceId, services.clock(), RECENT_IMPORTS),
  ]);
  const errors = options.errors ?? {};
  const records = html`<section class="card" aria-labelledby="records-title"><h2 id="records-title">Records</h2>
${scrollingTable(
  'Records per register',
  html`<table>
  <thead><tr><th scope="col">Register</th><th scope="col" class="num">Records</th><th scope="col">Last written</th></tr></thead>
  <tbody>${summary.map(
    (s) =>
      html`<tr><th scope="row">${registerTitle(s.register)}</th><td class="num">${s.records.toLocaleString('en')}</td><td>${formatTime(s.last_written_at, 'Never')}</td></tr>`,
  )}</tbody>
</table>`,
)}</section>`;
  const upload = html`<section class="card" aria-labelledby="load-title"><h2 id="load-title">Load records from a file</h2>
<p>The file is checked first: nothing is written until you have seen the report and confirmed. A record with an id that exists replaces it; an identical record is left as it is.</p>
${formError(errors)}
<form method="post" action="/console/data/check" enctype="multipart/form-data" class="stack">
  ${uploadFields(ctx, options.form ?? { register: '', sha256: '' }, errors)}
  <div class="actions"><button type="submit" class="button primary">Check file</button></div>
</form></section>`;
  return layout(ctx, {
    title: 'Data',
    nav: 'data',
    notice: options.notice,
    body: html`<p class="lead">The records your system of record has written to this workspace. Loading a file is a direct write:
each record written moves its <code>updated_at</code> and sends no webhook event (state changes with an event go through the
domain actions).</p>
${records}
${upload}
${importsSection(imports)}`,
  });
}

/** The dry run's report and the form that imports the same file. */
function checkPage(ctx: PageContext, file: Upload, register: Register | undefined, report: ImportReport, notice?: string): Html {
  const sha256 = digest(file.bytes);
  const refused = report.refused_count;
  // A line with several faults has one entry each: count the lines the list shows.
  const unlisted = refused - new Set(firstRefusals(report.refused, REFUSALS_ON_REPORT).map((r) => r.line)).size;
  const body = html`<section class="card stack" aria-labelledby="report-title">
<h2 id="report-title">Report of the check</h2>
<p><strong>${file.name || 'The file'}</strong>: ${report.lines} lines${register ? html`, CSV of ${registerTitle(register.path)}` : ', NDJSON'}. Nothing has been written yet.</p>
${countsTable(report.counts, 'What the import would do')}
${
  refused
    ? html`<h3>${refused} ${refused === 1 ? 'line is' : 'lines are'} refused and would not be written</h3>
${refusalList(report.refused, REFUSALS_ON_REPORT)}
${unlisted > 0 ? html`<p class="hint">${unlisted} more refused ${unlisted === 1 ? 'line is' : 'lines are'} not listed; <code>wsops import --dry-run</code> lists up to 1,000 faults.</p>` : ''}`
    : html`<p>${badge('good', 'No line refused')}</p>`
}
${repeatedList(report)}
</section>
<section class="card stack" aria-labelledby="confirm-title">
<h2 id="confirm-title">Import this file</h2>
<p>Choose the same file again and confirm. ${refused ? 'The refused lines are skipped; every other line is written.' : 'Every line is written.'} If the file has changed since the check, it is checked again instead.</p>
<form method="post" action="/console/data/import" enctype="multipart/form-data" class="stack">
  ${uploadFields(ctx, { register: register?.path ?? '', sha256 }, {})}
  <input type="hidden" name="sha256" value="${sha256}">
  <div class="actions"><button type="submit" class="button primary">Import</button> <a class="button" href="/console/data">Cancel</a></div>
</form>
</section>`;
  return layout(ctx, { title: 'Check of a file', nav: 'data', notice: notice ? { kind: 'error', text: notice } : undefined, body });
}

export function registerDataPages(scope: FastifyInstance, services: ConsoleServices): void {
  scope.register(async (data) => {
    // Before the body is read: a visitor without a session never makes the server buffer a file.
    data.addHook('onRequest', requireSession(services));
    await data.register(multipart, {
      attachFieldsToBody: 'keyValues',
      limits: { fileSize: UPLOAD_LIMIT, files: 1, fields: 5, fieldSize: 1024, parts: 6 },
      // The file's name and type are kept beside its bytes (keyValues alone keeps only the bytes).
      async onFile(part) {
        (part as unknown as { value: Upload }).value = { name: part.filename, type: part.mimetype, bytes: await part.toBuffer() };
      },
    });
    data.setErrorHandler((error, _request, reply) => {
      if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
        return sendHtml(
          reply,
          messagePage(
            'File too large',
            `The console takes files of at most ${UPLOAD_LIMIT_TEXT}. Nothing was changed. Split the file, or load it with wsops import, which streams any size.`,
            { href: '/console/data', label: 'Back to Data' },
          ),
          413,
        );
      }
      throw error;
    });

    data.get('/data', async (request, reply) => {
      const ctx = pageContext(services, request);
      const id = (request.query as Record<string, string | undefined>).imported;
      let notice: { kind: 'success' | 'error'; text: string } | undefined;
      if (id) {
        const done = (await recentImports(services.database.db, ctx.admin.workspaceId, services.clock(), RECENT_IMPORTS)).find(
          (i) => i.id === id,
        );
        if (done)
          notice = {
            kind: done.refused ? 'error' : 'success',
            text: `Imported ${done.lines} lines: ${totals(done.report)}${done.refused ? `; ${done.refused} refused (listed below)` : ''}.`,
          };
      }
      return sendHtml(reply, await renderDataPage(ctx, { notice }));
    });

    for (const step of ['check', 'import'] as const) {
      data.post(`/data/${step}`, async (request, reply) => {
        const ctx = pageContext(services, request);
        const form = uploadForm(request.body);
        const errors: FieldErrors = {};
        try {
          if (!form.file || form.file.bytes.length === 0) {
            throw new AppError('invalid_parameter', 'Choose a file to load.', { param: 'file' });
          }
          const file = form.file;
          const register = csvRegister(form, file);
          const confirmed = step === 'import' && form.sha256 === digest(file.bytes);
          if (!confirmed) {
            const report = await runImport(ctx, file, register, true);
            const notice =
              step === 'import' ? 'This is not the file that was checked, so it was checked again: nothing was written.' : undefined;
            return sendHtml(reply, checkPage(ctx, file, register, report, notice));
          }
          const report = await runImport(ctx, file, register, false);
          return reply.redirect(`/console/data?imported=${report.id}`, 303);
        } catch (err) {
          if (!(err instanceof AppError) || err.code !== 'invalid_parameter') throw err;
          const param = err.extra.param === 'register' || err.extra.param === 'file' ? err.extra.param : '_form';
          errors[param] = err.message;
          return sendHtml(reply, await renderDataPage(ctx, { form, errors }), 400);
        }
      });
    }
  });
}
