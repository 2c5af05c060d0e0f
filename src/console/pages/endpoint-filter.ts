/**
 * The endpoint's content filter in the console: the field of the register form, and the
 * endpoint page's block where it is edited, cleared, and tried against one of the workspace's
 * recent events before or after saving. The language and its rules are
 * src/webhooks/events/event-filter.ts's; the page only shows and submits.
 */

import type { PageContext } from '../../console-kit/context.js';
import type { FieldErrors } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { csrfField } from '../../console-kit/layout.js';
import type { FilterTrial, RecentEvent } from '../../webhooks/endpoints/endpoint-filters.js';
import type { EndpointView } from '../../webhooks/endpoints/endpoints.js';

/** What the block shows after a submission: the text as typed, its refusal, or a trial's result. */
export interface FilterFormState {
  draft: string;
  errors?: FieldErrors;
  trial?: FilterTrial;
  eventId?: string;
}

const EXAMPLE = '{"data": {"purchase_request": {"amount_minor": {"$gt": 100000}}}}';

/** The filter as the textarea shows it: the stored JSON, indented. */
export const filterText = (filter: EndpointView['filter']): string => (filter ? JSON.stringify(filter, null, 2) : '');

/** The textarea, with its hint and its error beside it (the register form and the endpoint page). */
export function filterField(value: string, errors: FieldErrors = {}): Html {
  const error = errors.filter;
  return html`<div class="field${error ? ' has-error' : ''}">
  <label for="f-filter">Content filter (optional)</label>
  <p class="hint" id="f-filter-hint">Only events whose webhook body matches this JSON are sent; leave it empty for every event subscribed to.
  For example <code>${EXAMPLE}</code>. Operators: <code>$eq $neq $gt $gte $lt $lte $in $nin $exist $and $or</code>; see docs/guide/filters.md.</p>
  <textarea id="f-filter" name="filter" rows="5" spellcheck="false" aria-describedby="f-filter-hint${error ? ' f-filter-error' : ''}"${error ? html` aria-invalid="true"` : ''}>${value}</textarea>
  ${error ? html`<p class="error" id="f-filter-error">${error}</p>` : ''}
</div>`;
}

function trialResult(trial: FilterTrial): Html {
  const what = html`<code>${trial.event_type}</code> <code>${trial.event_id}</code>`;
  return trial.matched
    ? html`<p class="notice notice-success" role="status" data-filter-trial="matched">Matched: ${what} matches the filter in the field, so it would be sent.</p>`
    : html`<p class="notice notice-error" role="status" data-filter-trial="not-matched">Not matched: ${what} does not match the filter in the field, so it would not be sent${trial.failed_clause ? html`; the clause that failed: <code>${trial.failed_clause}</code>` : ''}.</p>`;
}

export function filterSection(ctx: PageContext, e: EndpointView, recent: readonly RecentEvent[], state?: FilterFormState): Html {
  const base = `/console/webhooks/${encodeURIComponent(e.id)}`;
  const errors = state?.errors ?? {};
  const eventError = errors.event_id;
  return html`<section aria-labelledby="filter-h" id="filter">
  <h2 id="filter-h">Content filter</h2>
  <p>${e.filter ? html`Only events matching <code data-filter>${JSON.stringify(e.filter)}</code> are sent. Events it leaves out are not delivered and are not failures.` : 'No filter: every event this endpoint subscribes to is sent.'} Verification and test events are always sent.</p>
  ${state?.trial ? trialResult(state.trial) : ''}
  <form method="post" action="${base}/filter" class="stack" novalidate>${csrfField(ctx)}
  ${filterField(state?.draft ?? filterText(e.filter), errors)}
  <div class="field${eventError ? ' has-error' : ''}">
  <label for="f-event_id">Test against a recent event</label>
  ${
    recent.length
      ? html`<select id="f-event_id" name="event_id"${eventError ? html` aria-invalid="true" aria-describedby="f-event_id-error"` : ''}>${recent.map(
          (r) =>
            html`<option value="${r.id}"${r.id === state?.eventId ? html` selected` : ''}>${r.type} · ${r.created_at.slice(0, 19).replace('T', ' ')} UTC · ${r.id}</option>`,
        )}</select>`
      : html`<p class="hint">No recent event of the types this endpoint subscribes to.</p>`
  }
  ${eventError ? html`<p class="error" id="f-event_id-error">${eventError}</p>` : ''}
  </div>
  <p><button type="submit" class="primary">Save filter</button>${recent.length ? html` <button type="submit" formaction="${base}/filter/test">Test this filter</button>` : ''}</p>
  </form>
</section>`;
}
