/* ==== C1: copy buttons, confirmations (progressive enhancement: every action also works without this) ==== */
(() => {
  // Copy buttons: <button data-copy="ID"> copies the value of the element with that id.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', async () => {
      const target = document.getElementById(button.getAttribute('data-copy'));
      if (!target) return;
      const text = 'value' in target ? target.value : target.textContent;
      const label = button.textContent;
      let copied = false;
      try {
        if (navigator.clipboard && window.isSecureContext) {
          await navigator.clipboard.writeText(text);
          copied = true;
        }
      } catch {
        copied = false;
      }
      if (!copied) {
        // Fallback: select the text so the user can press Ctrl+C / Cmd+C.
        if (typeof target.select === 'function') {
          target.focus();
          target.select();
          try {
            copied = document.execCommand('copy');
          } catch {
            copied = false;
          }
        }
      }
      button.textContent = copied ? 'Copied' : 'Selected: press Ctrl+C';
      button.setAttribute('aria-live', 'polite');
      setTimeout(() => {
        button.textContent = label;
      }, 2500);
    });
  }
  // Forms with data-confirm ask before they are sent.
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  }
  // Selecting a secret's field selects all of it.
  for (const input of document.querySelectorAll('input.secret-value')) {
    input.addEventListener('focus', () => input.select());
  }
})();
/* ==== end C1 ==== */
/* ==== C2: webhooks (register-form live rules, delivery chart) ==== */
(() => {
  // Cheap rules as the user types; the server checks every rule again on submit
  // (createEndpoint: url-safety.ts and checkSubscription), and its refusal is what counts.
  const form = document.querySelector('form[data-webhook-form]');
  if (form) {
    const allowPrivate = form.getAttribute('data-allow-private') === 'true';
    const url = form.querySelector('input[name="url"]');
    const urlLive = document.getElementById('f-url-live');
    const eventsLive = document.getElementById('f-events-live');
    const say = (el, text) => {
      if (!el) return;
      el.textContent = text;
      el.hidden = text === '';
    };
    const checkUrl = () => {
      if (!url || allowPrivate || url.value.trim() === '') return say(urlLive, '');
      let parsed;
      try {
        parsed = new URL(url.value.trim());
      } catch {
        return say(urlLive, 'Give an absolute URL, such as https://hooks.example.com/wsops.');
      }
      const setting = ' (rule: scheme; a local receiver needs WSOPS_ALLOW_PRIVATE_WEBHOOKS=true on the server, test and development only)';
      // Broker destinations (amqps://, tls://) take any port; their other rules are the server's.
      if (parsed.protocol === 'amqps:' || parsed.protocol === 'tls:') return say(urlLive, '');
      if (parsed.protocol !== 'https:')
        return say(urlLive, `The URL must start with https:// (or amqps:// for RabbitMQ, tls:// for NATS)${setting}.`);
      if (parsed.port !== '' && parsed.port !== '443')
        return say(
          urlLive,
          `Port ${parsed.port} is not allowed: webhook endpoints use port 443 (rule: port; WSOPS_ALLOW_PRIVATE_WEBHOOKS=true on the server allows any port, test and development only).`,
        );
      say(urlLive, '');
    };
    const checkScopes = () => {
      const scopes = new Set([...form.querySelectorAll('input[name="scopes"]:checked')].map((i) => i.value));
      const missing = [...form.querySelectorAll('input[name="events"]:checked')]
        .filter((i) => !scopes.has(i.getAttribute('data-scope')))
        .map((i) => `${i.value} needs the scope ${i.getAttribute('data-scope')}`);
      say(eventsLive, missing.length ? `Tick the scope each chosen event needs: ${missing.join('; ')}.` : '');
    };
    url?.addEventListener('input', checkUrl);
    form.addEventListener('change', checkScopes);
  }

  // The delivery chart: success rate and median latency per bucket, from the JSON block that
  // the page also shows as a table (the table is the no-JS view).
  const data = document.getElementById('delivery-stats');
  const target = document.getElementById('delivery-chart');
  if (data && target) {
    const draw = () => {
      const uPlot = window.uPlot;
      if (!uPlot) return;
      const stats = JSON.parse(data.textContent || '{}');
      const buckets = stats.buckets || [];
      const x = buckets.map((b) => Date.parse(b.start) / 1000);
      const rate = buckets.map((b) => (b.success_rate === null ? null : Math.round(b.success_rate * 1000) / 10));
      const p50 = buckets.map((b) => b.p50_latency_ms);
      const width = Math.max(280, Math.min(target.clientWidth || 720, 960));
      new uPlot(
        {
          width,
          height: 240,
          scales: { x: { time: true }, pct: { range: [0, 100] }, ms: {} },
          series: [
            {},
            { label: 'Success rate (%)', scale: 'pct', stroke: '#1a7f37', width: 2, spanGaps: false },
            { label: 'Median latency (ms)', scale: 'ms', stroke: '#3451b2', width: 2, dash: [6, 4] },
          ],
          axes: [{}, { scale: 'pct', label: '%' }, { scale: 'ms', side: 1, label: 'ms', grid: { show: false } }],
        },
        [x, rate, p50],
        target,
      );
      target.removeAttribute('aria-hidden');
      target.setAttribute('role', 'img');
      target.setAttribute('aria-label', 'Chart of success rate and median latency; the same numbers are in the table below.');
    };
    if (window.uPlot) draw();
    else window.addEventListener('load', draw);
  }
})();
/* ==== end C2 ==== */
/* ==== C3: Overview (API requests per key chart) ==== */
(() => {
  // Requests per key and hour, from the JSON block the page also shows as a table of totals
  // (the table is the no-JS view). One line per key; uPlot's legend names each line.
  const data = document.getElementById('usage-data');
  const target = document.getElementById('usage-chart');
  if (!data || !target) return;
  const palette = ['#3451b2', '#1a7f37', '#9a6700', '#cf222e', '#8250df', '#0969da', '#bf3989', '#57606a'];
  const draw = () => {
    const uPlot = window.uPlot;
    if (!uPlot) return;
    const usage = JSON.parse(data.textContent || '{}');
    const x = usage.x || [];
    const series = usage.series || [];
    const width = Math.max(280, Math.min(target.clientWidth || 720, 960));
    new uPlot(
      {
        width,
        height: 260,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: palette[i % palette.length],
            width: 2,
            dash: i >= palette.length ? [6, 4] : undefined,
          })),
        ],
        axes: [{}, { label: 'requests per hour' }],
      },
      [x, ...series.map((s) => s.data)],
      target,
    );
  };
  if (window.uPlot) draw();
  else window.addEventListener('load', draw);
})();
/* ==== end C3 ==== */
/* ==== C4: passkeys (WebAuthn): the browser's side of forms marked data-passkey="create" or "get" ==== */
(() => {
  // The server sends the ceremony's options as JSON with base64url fields; the browser API
  // wants ArrayBuffers, and its answer is posted back (as JSON, base64url) in the form's
  // hidden `response` field. Without JavaScript the form posts an empty answer and the server
  // says a passkey needs JavaScript.
  const toBytes = (text) => {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
    return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  };
  const toText = (buffer) => {
    let binary = '';
    for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  const withBytes = (list) => (list || []).map((c) => ({ ...c, id: toBytes(c.id) }));

  const creationOptions = (o) => ({
    ...o,
    challenge: toBytes(o.challenge),
    user: { ...o.user, id: toBytes(o.user.id) },
    excludeCredentials: withBytes(o.excludeCredentials),
  });
  const requestOptions = (o) => ({ ...o, challenge: toBytes(o.challenge), allowCredentials: withBytes(o.allowCredentials) });

  const answerOf = (credential) => {
    const r = credential.response;
    const response = { clientDataJSON: toText(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toText(r.attestationObject);
      response.transports = typeof r.getTransports === 'function' ? r.getTransports() : [];
    } else {
      response.authenticatorData = toText(r.authenticatorData);
      response.signature = toText(r.signature);
      if (r.userHandle) response.userHandle = toText(r.userHandle);
    }
    return JSON.stringify({
      id: credential.id,
      rawId: toText(credential.rawId),
      type: credential.type,
      response,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
    });
  };

  const explain = (error, kind) => {
    if (error?.name === 'NotAllowedError') return 'The passkey prompt was closed or timed out. Nothing changed; try again.';
    if (error?.name === 'InvalidStateError' && kind === 'create')
      return 'This authenticator already holds one of your passkeys. Use another one, or keep the passkey you have.';
    if (error?.name === 'SecurityError')
      return 'The browser refused a passkey for this address. Open the console at its usual address (WSOPS_BASE_URL) and try again.';
    return `The passkey could not be used (${error?.message || error}). Try again, or use a code.`;
  };

  for (const form of document.querySelectorAll('form[data-passkey]')) {
    const kind = form.getAttribute('data-passkey');
    const answer = form.querySelector('input[name="response"]');
    const status = form.querySelector('[data-passkey-status]');
    const say = (text) => {
      if (status) status.textContent = text;
    };
    form.addEventListener('submit', async (event) => {
      if (!answer || answer.value) return;
      event.preventDefault();
      if (!window.PublicKeyCredential || !navigator.credentials) {
        say('This browser cannot use passkeys here (it needs https, or a newer browser). Use a code instead.');
        return;
      }
      const name = form.querySelector('input[name="name"]');
      if (name && name.value.trim() === '') {
        say('Give the passkey a name first.');
        name.focus();
        return;
      }
      const buttons = form.querySelectorAll('button');
      for (const b of buttons) b.disabled = true;
      try {
        say('Asking your device for the passkey…');
        const csrf = form.querySelector('input[name="_csrf"]');
        const reply = await fetch(form.getAttribute('data-passkey-options'), {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: csrf ? csrf.value : '' }),
        });
        const options = await reply.json();
        if (!reply.ok) throw new Error(options.error || `the console answered ${reply.status}`);
        const credential =
          kind === 'create'
            ? await navigator.credentials.create({ publicKey: creationOptions(options) })
            : await navigator.credentials.get({ publicKey: requestOptions(options) });
        answer.value = answerOf(credential);
        say('Checking…');
        form.submit();
      } catch (error) {
        say(explain(error, kind));
        for (const b of buttons) b.disabled = false;
      }
    });
  }
})();
/* ==== end C4 ==== */
