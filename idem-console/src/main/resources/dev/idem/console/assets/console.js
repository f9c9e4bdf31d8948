// The Idem operator console. Plain JavaScript, no build step, no dependencies.
// The page is served by ConsoleServlet at the path it is mounted on, and calls the API under api/ next to it. The
// application's ConsoleAuthorizer decides who may use it: by the session the application signed the operator in to
// (sent as the browser's cookies), or by a token the operator types here, kept in sessionStorage and sent as a bearer
// token. Every action carries X-Idem-Console: 1. Every value from the service is shown through textContent or an
// attribute, never parsed as HTML.
'use strict';

(() => {
  const KEY_STORAGE = 'idem.console.token';
  const SVG = 'http://www.w3.org/2000/svg';
  const params = new URLSearchParams(location.search);
  const REFRESH_MS = Math.min(60000, Math.max(500, Number(params.get('refresh')) || 3000));
  const SAMPLES = 60;
  const RECORDS_PAGE = 50;
  const OUTBOX_PAGE = 100;
  /** No call waits longer: a hung request must not hold up the refreshes after it. */
  const CALL_TIMEOUT_MS = 10000;
  /** A key search scans the record table: refreshed on submit, and on its own at most this often. */
  const SEARCH_REFRESH_MS = 30000;
  const SERIES = [
    { outcome: 'replayed', label: 'replays' },
    { outcome: 'mismatch', label: 'payload mismatches' },
    { outcome: 'in_progress', label: 'in-progress conflicts' },
  ];
  const ROOT = new URL('.', location.href);

  const view = {
    tab: 'records',
    recordsKey: '',
    recordsCursor: null,
    recordsNext: null,
    recordsLoadedAt: 0,
    recordsShown: null,
    outboxShown: null,
    // the number of the latest request of each loader: an answer to an older one is dropped
    requests: { records: 0, outbox: 0, metrics: 0 },
    expanded: new Set(),
    samples: [],
    timer: null,
    refreshing: false,
    // the api/session answer while signed in: the operator's name and which views the console has
    session: null,
  };

  const $ = (id) => document.getElementById(id);

  /** An element with attributes ({text} sets textContent) and children (strings become text nodes). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'text') node.textContent = String(value);
      else if (name === 'className') node.className = value;
      else if (name === 'onclick') node.addEventListener('click', value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  // ------------------------------------------------------------------------------------------------ formatting

  function duration(ms) {
    if (ms === null || ms === undefined) return '–';
    const abs = Math.abs(ms);
    if (abs < 1000) return `${Math.round(abs)} ms`;
    const s = abs / 1000;
    if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
    const h = Math.floor(m / 60);
    if (h < 48) return `${h} h ${m % 60} min`;
    return `${Math.floor(h / 24)} d ${h % 24} h`;
  }

  /** A bar's bound: whole seconds up to 2 min, then minutes, then hours (one decimal below ten). */
  function seconds(value) {
    const round = (v) => (v < 10 ? +v.toFixed(1) : Math.round(v));
    if (value < 120) return `${value} s`;
    if (value < 7200) return `${round(value / 60)} min`;
    return `${round(value / 3600)} h`;
  }

  function ago(iso) {
    if (!iso) return '–';
    return `${duration(Date.now() - Date.parse(iso))} ago`;
  }

  function time(iso) {
    return iso ? new Date(iso).toLocaleString() : '';
  }

  function pill(text) {
    return el('span', { className: `pill ${text}`, text: text.replace('_', ' ') });
  }

  function shortId(id) {
    return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
  }

  // ------------------------------------------------------------------------------------------------ calls

  class SignedOut extends Error {}

  class CallFailed extends Error {
    constructor(message, status, code) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /** fetch, given up after CALL_TIMEOUT_MS with an error that says so. */
  async function fetchWithTimeout(url, options, what) {
    try {
      return await fetch(url, { ...options, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    } catch (e) {
      if (e && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
        throw new Error(`${what}: no answer within ${CALL_TIMEOUT_MS / 1000} s`);
      }
      throw e;
    }
  }

  /** The headers of a call: the typed token, if any, and the console's header on actions. */
  function headersFor(method, key) {
    const headers = { Accept: 'application/json' };
    if (key) headers.Authorization = `Bearer ${key}`;
    if (method !== 'GET' && method !== 'HEAD') headers['X-Idem-Console'] = '1';
    return headers;
  }

  async function call(method, path, json) {
    if (!view.session) throw new SignedOut('signed out');
    const headers = headersFor(method, sessionStorage.getItem(KEY_STORAGE));
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetchWithTimeout(new URL(path, ROOT), {
      method,
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
      cache: 'no-store',
      credentials: 'same-origin',
    }, `${method} ${path}`);
    if (response.status === 401) {
      signOut('The console refused the key. Sign in again.');
      throw new SignedOut('refused');
    }
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      const what = body && (body.detail || body.title);
      throw new CallFailed(`${method} ${path}: ${response.status}${what ? ` ${what}` : ''}`, response.status,
        body && body.code);
    }
    return body;
  }

  function showError(error) {
    if (error instanceof SignedOut) return;
    const box = $('error');
    box.textContent = error.message || String(error);
    box.hidden = false;
  }

  function notify(message) {
    const box = $('notice');
    box.textContent = message;
    box.hidden = false;
    $('error').hidden = true;
  }

  // ------------------------------------------------------------------------------------------------ sign-in

  /** Asks api/session whether the console lets this browser in: with the typed key, or with none. */
  async function signIn(key) {
    const error = $('login-error');
    error.hidden = true;
    let response;
    try {
      response = await fetchWithTimeout(new URL('api/session', ROOT), {
        headers: headersFor('GET', key),
        cache: 'no-store',
        credentials: 'same-origin',
      }, 'sign-in');
    } catch (e) {
      error.textContent = `The service did not answer: ${e.message}`;
      error.hidden = false;
      return;
    }
    if (!response.ok) {
      if (!key && response.status === 401) {
        // the application wants a key: ask for one, without an error
        signOut('');
        return;
      }
      const problem = await response.json().catch(() => null);
      const detail = problem && problem.detail ? ` (${problem.detail})` : '';
      error.textContent = response.status === 401
        ? `That is not the admin key: the console refused it${detail}.`
        : `Sign-in failed: HTTP ${response.status}${detail}`;
      error.hidden = false;
      return;
    }
    view.session = await response.json();
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    $('login-key').value = '';
    start();
  }

  function signOut(message) {
    sessionStorage.removeItem(KEY_STORAGE);
    view.session = null;
    clearInterval(view.timer);
    view.timer = null;
    $('app').hidden = true;
    $('logout').hidden = true;
    $('login').hidden = false;
    $('refresh-status').textContent = '';
    const error = $('login-error');
    error.textContent = message || '';
    error.hidden = !message;
    $('login-key').focus();
  }

  function start() {
    $('login').hidden = true;
    $('app').hidden = false;
    // signed in by the application itself (no key typed here): signing out is the application's business
    $('logout').hidden = !sessionStorage.getItem(KEY_STORAGE);
    $('operator').textContent = view.session.operator;
    document.querySelector('[data-tab="outbox"]').hidden = !view.session.outbox;
    document.querySelector('[data-tab="charts"]').hidden = !view.session.metrics;
    if ((view.tab === 'outbox' && !view.session.outbox) || (view.tab === 'charts' && !view.session.metrics)) {
      view.tab = 'records';
    }
    selectTab(view.tab);
    refresh();
    clearInterval(view.timer);
    view.timer = setInterval(refresh, REFRESH_MS);
  }

  // ------------------------------------------------------------------------------------------------ tabs

  function selectTab(tab) {
    view.tab = tab;
    for (const button of document.querySelectorAll('.tabs [data-tab]')) {
      const selected = button.dataset.tab === tab;
      button.setAttribute('aria-selected', String(selected));
      $(`panel-${button.dataset.tab}`).hidden = !selected;
    }
    $('notice').hidden = true;
    $('error').hidden = true;
  }

  async function refresh() {
    if (view.refreshing || !view.session) return;
    view.refreshing = true;
    try {
      const work = view.session.metrics ? [loadMetrics()] : [];
      // a key search scans the whole record table, and every state at once may read up to a bound of records per
      // state (RecordSearch.scanning): not every few seconds
      const scans = view.recordsKey || $('records-state').value === 'any';
      const searchDue = !scans || Date.now() - view.recordsLoadedAt >= SEARCH_REFRESH_MS;
      if (view.tab === 'records' && searchDue) work.push(loadRecords());
      if (view.tab === 'outbox') work.push(loadOutbox());
      await Promise.all(work);
      $('refresh-status').textContent = `updated ${new Date().toLocaleTimeString()}, every ${REFRESH_MS / 1000} s`;
    } catch (e) {
      showError(e);
    } finally {
      view.refreshing = false;
    }
  }

  // ------------------------------------------------------------------------------------------------ records

  /** Takes the search form's values: paging and auto-refreshes keep them until the next submit. */
  function newRecordsSearch() {
    view.recordsKey = $('records-key').value.trim();
    view.recordsCursor = null;
    return loadRecords().catch(showError);
  }

  function recordsQuery() {
    const q = new URLSearchParams({ state: $('records-state').value, limit: String(RECORDS_PAGE) });
    if (view.recordsKey) q.set('key', view.recordsKey);
    if (view.recordsCursor) q.set('after', view.recordsCursor);
    return q;
  }

  /** What a row shows apart from the times, which move on with every load. */
  function recordSignature(r) {
    return [r.scope, r.operation, r.key, r.state, r.version, r.recovery_point, r.lease_owner, r.locked_until,
      r.updated_at, r.response_status, r.resume_attempts, r.unreadable].join('\u0000');
  }

  async function loadRecords() {
    const ticket = ++view.requests.records;
    const query = recordsQuery();
    const page = await call('GET', `api/records?${query}`);
    if (ticket !== view.requests.records) return; // a later load was asked for: its answer counts
    const loadedAt = Date.now();
    view.recordsLoadedAt = loadedAt;
    view.recordsNext = page.next;
    const records = page.records.map((r) => ({ ...r, loadedAt }));
    const shown = `${query}\u0001${records.map(recordSignature).join('\u0001')}`;
    const body = $('records-body');
    if (shown === view.recordsShown && body.rows.length === records.length) {
      // the same rows: only their times change, so a selection in the table survives the refresh
      records.forEach((r, i) => updateRecordRow(body.rows[i], r));
    } else {
      body.replaceChildren(...records.map(recordRow));
      view.recordsShown = shown;
    }
    $('records-empty').hidden = records.length > 0;
    $('records-next').disabled = !page.next;
    $('records-first').disabled = !view.recordsCursor;
  }

  /** The lease's time left as of now, from the answer's lease_left_ms and when it came; null when none. */
  function leaseLeft(r) {
    if (r.lease_left_ms === null || r.lease_left_ms === undefined) return null;
    return r.lease_left_ms - (Date.now() - r.loadedAt);
  }

  function leaseCell(r) {
    if (r.lease_left_ms === null || r.lease_left_ms === undefined) return '–';
    return r.lease_left_ms >= 0
      ? el('span', { text: `ends in ${duration(r.lease_left_ms)}` })
      : el('span', { className: 'late', text: `expired ${duration(r.lease_left_ms)} ago` });
  }

  const rowRecords = new WeakMap();

  /** The three decisions an operator can take on an uncertain record. */
  const RESOLUTIONS = [
    { action: 'complete', label: 'Complete', status: '201' },
    { action: 'fail', label: 'Fail', status: '422' },
    { action: 'retry', label: 'Retry' },
  ];

  function actionButtons(row, r) {
    const buttons = [];
    // a record whose sealed data does not open cannot be resolved (the console refuses): it can be evicted
    if (r.state === 'uncertain' && !r.unreadable) {
      RESOLUTIONS.forEach((res) => buttons.push(el('button', {
        type: 'button', className: 'small', 'data-testid': `resolve-${res.action}`, text: res.label,
        onclick: () => resolveRecord(rowRecords.get(row), res),
      })));
    }
    buttons.push(el('button', {
      type: 'button', className: 'danger small', 'data-testid': 'evict', text: 'Evict',
      onclick: () => evictRecord(rowRecords.get(row)),
    }));
    return buttons;
  }

  /** The application's hints about a record (RecordHints), as one line of text; '' for none. */
  function hintText(r) {
    return Object.entries(r.hints || {}).map(([name, value]) => `${name}: ${value}`).join(', ');
  }

  function recordRow(r) {
    const uncertain = r.state === 'uncertain';
    const row = el('tr', { 'data-testid': 'record-row', 'data-key': r.key, 'data-state': r.state },
      el('td', { className: 'mono', text: r.scope }),
      el('td', { className: 'mono nowrap', text: r.operation }),
      el('td', {
        className: 'mono wrap', 'data-testid': 'record-key', text: r.key, title: hintText(r) || null,
      }),
      el('td', { title: uncertain ? `${r.resume_attempts} failed resumptions` : null }, pill(r.state),
        r.unreadable ? el('span', {
          className: 'pill unreadable', 'data-testid': 'record-unreadable', text: 'unreadable',
          title: 'Its sealed data does not open (a key missing from the keyring?): evict it, or restore the key',
        }) : null),
      el('td', { text: r.recovery_point || '–' }),
      el('td', { className: 'mono', text: r.lease_owner || '–' }),
      el('td', { 'data-testid': 'lease-age', text: r.state === 'in_progress' ? duration(r.lease_age_ms) : '–' }),
      el('td', { 'data-testid': 'lease-ends' }, leaseCell(r)),
      el('td', { className: 'nowrap', title: time(r.updated_at), text: ago(r.updated_at) }),
      el('td', { className: 'actions' }));
    row.cells[9].replaceChildren(...actionButtons(row, r));
    rowRecords.set(row, r);
    return row;
  }

  /** Sets a cell's text only when it differs, leaving the other cells' text nodes (and a selection) alone. */
  function setText(cell, text) {
    if (cell.textContent !== text) cell.textContent = text;
  }

  function updateRecordRow(row, r) {
    rowRecords.set(row, r);
    setText(row.cells[6], r.state === 'in_progress' ? duration(r.lease_age_ms) : '–');
    const lease = leaseCell(r);
    if (row.cells[7].textContent !== (typeof lease === 'string' ? lease : lease.textContent)) {
      row.cells[7].replaceChildren(lease);
    }
    setText(row.cells[8], ago(r.updated_at));
  }

  /**
   * Decides an uncertain record: asks for the answer (complete, fail) and the reason, then resolves it at the version
   * shown. A record that moved on meanwhile is left alone and reported.
   */
  async function resolveRecord(r, res) {
    const what = `${res.label} the uncertain record of key "${r.key}" (${r.operation}, scope ${r.scope})`;
    const body = { action: res.action };
    if (res.status) {
      const status = window.prompt(`${what}.\n\nThe HTTP status a retry of this key will get from now on`
        + (res.action === 'complete' ? ' (below 400):' : ' (a 4xx):'), res.status);
      if (status === null) return;
      body.status = Number(status);
      const hints = hintText(r);
      const answer = window.prompt('The JSON body a retry of this key will get (check the other system first'
        + `${hints ? `: ${hints}` : ''}):`, '{}');
      if (answer === null) return;
      try {
        body.body = JSON.parse(answer);
      } catch (e) {
        showError(new Error(`Not resolved: the body is not JSON (${e.message}).`));
        return;
      }
    } else if (!window.confirm(`${what}?\n\nIt goes back in progress and is resumed at once: its provider call is `
        + 'sent again with the same key. Only do this when the provider deduplicates on it.')) {
      return;
    }
    const reason = window.prompt('Why? The reason is kept in the record\'s audit with your decision.', '');
    if (reason === null) return;
    if (!reason.trim()) {
      showError(new Error('Not resolved: a reason is required.'));
      return;
    }
    body.reason = reason;
    const q = new URLSearchParams({ scope: r.scope, operation: r.operation, key: r.key, version: String(r.version) });
    try {
      const entry = await call('POST', `api/records/resolve?${q}`, body);
      notify(`Resolved the record of key ${r.key}: ${entry.from} -> ${entry.to}.`);
    } catch (e) {
      showError(e instanceof CallFailed && e.code === 'CONFLICT.record.changed'
        ? new Error(`Not resolved: the record of key ${r.key} changed since it was shown. Look at it again.`) : e);
    }
    await loadRecords().catch(showError);
  }

  async function evictRecord(r) {
    const left = leaseLeft(r);
    const live = r.state === 'in_progress' && left !== null && left > 0;
    let lease = '';
    if (r.state === 'in_progress') {
      if (left === null) lease = ', without a lease';
      else lease = live ? `, its lease ends in ${duration(left)}` : `, its lease ended ${duration(left)} ago`;
    }
    const question = `Evict the record of key "${r.key}" (${r.operation}, scope ${r.scope})?\n\n`
      + `It is ${r.state.replace('_', ' ')}${lease}.\n\n`
      + (r.state === 'in_progress' ? 'The next request with this key starts afresh.'
        : 'Its stored answer is forgotten: the next request with this key runs again.');
    if (!window.confirm(question)) return;
    if (live && !window.confirm(`The lease on "${r.key}" is live for ${duration(left)} more: its worker may still `
        + 'be running the request, and a retry after the eviction would run it a second time (a second charge, '
        + 'say).\n\nEvict it all the same, while the lease is live?')) {
      return;
    }
    const q = new URLSearchParams({ scope: r.scope, operation: r.operation, key: r.key, version: String(r.version) });
    if (live) q.set('force', 'true');
    try {
      await call('DELETE', `api/records?${q}`);
      notify(`Evicted the record of key ${r.key}.`);
    } catch (e) {
      showError(e instanceof CallFailed && e.code === 'CONFLICT.record.changed'
        ? new Error(`Not evicted: the record of key ${r.key} changed since it was shown. Look at it again.`) : e);
    }
    await loadRecords().catch(showError);
  }

  // ------------------------------------------------------------------------------------------------ outbox

  async function loadOutbox() {
    const ticket = ++view.requests.outbox;
    const status = $('outbox-status').value;
    const [stats, page] = await Promise.all([
      call('GET', 'api/outbox/stats'),
      call('GET', `api/outbox?status=${encodeURIComponent(status)}&limit=${OUTBOX_PAGE}`),
    ]);
    if (ticket !== view.requests.outbox) return;
    $('outbox-pending').textContent = stats.counts.pending;
    $('outbox-oldest').textContent = stats.oldest_pending_age_ms === null ? 'none'
      : duration(stats.oldest_pending_age_ms);
    $('outbox-dead').textContent = stats.counts.dead;
    $('outbox-delivered').textContent = stats.counts.delivered;
    $('outbox-discarded').textContent = stats.counts.discarded;
    $('outbox-relay').textContent = `${stats.relay}: ${stats.relay_running ? 'running' : 'stopped'}`;
    const shown = JSON.stringify([status, [...view.expanded].sort(), page.events]);
    const body = $('outbox-body');
    if (shown === view.outboxShown) {
      // the same events: only the "ago" times move on, and a selection in the table survives
      for (const row of body.querySelectorAll('[data-testid="outbox-row"]')) {
        setText(row.cells[7], ago(row.cells[7].dataset.at));
      }
    } else {
      const rows = [];
      for (const event of page.events) {
        rows.push(eventRow(event));
        if (view.expanded.has(event.id)) rows.push(historyRow(event));
      }
      body.replaceChildren(...rows);
      view.outboxShown = shown;
    }
    $('outbox-empty').hidden = page.events.length > 0;
  }

  function eventRow(e) {
    const actions = el('td', { className: 'actions' },
      el('button', {
        type: 'button', className: 'secondary small', 'data-testid': 'history-toggle',
        'aria-expanded': String(view.expanded.has(e.id)),
        text: `History (${e.history.length})`,
        onclick: () => {
          if (view.expanded.has(e.id)) view.expanded.delete(e.id);
          else view.expanded.add(e.id);
          loadOutbox().catch(showError);
        },
      }));
    if (e.status !== 'pending') {
      actions.append(el('button', {
        type: 'button', className: 'small', 'data-testid': 'replay', text: 'Replay',
        onclick: () => outboxAction(e, 'replay'),
      }));
    }
    if (e.status === 'dead' || e.status === 'pending') {
      actions.append(el('button', {
        type: 'button', className: 'danger small', 'data-testid': 'discard', text: 'Discard',
        onclick: () => outboxAction(e, 'discard'),
      }));
    }
    return el('tr', {
      'data-testid': 'outbox-row', 'data-event-id': e.id, 'data-aggregate-id': e.aggregate_id,
      'data-status': e.status,
    },
    el('td', { className: 'mono nowrap', title: e.id, text: shortId(e.id) }),
    el('td', { className: 'nowrap', text: e.type }),
    el('td', { className: 'mono id', text: e.aggregate_id }),
    el('td', { className: 'mono id', text: e.destination }),
    el('td', {}, pill(e.status)),
    el('td', { text: e.attempts }),
    el('td', { className: 'wrap', 'data-testid': 'last-error', text: e.last_error || '–' }),
    el('td', { className: 'nowrap', title: time(e.created_at), 'data-at': e.created_at, text: ago(e.created_at) }),
    actions);
  }

  function historyRow(e) {
    const attempts = e.history.map((a) => el('tr', { 'data-testid': 'attempt' },
      el('td', { text: a.attempt }),
      el('td', { className: 'nowrap', text: time(a.at) }),
      el('td', { text: a.response_code === null ? '–' : a.response_code }),
      el('td', { className: 'wrap', text: a.error || '–' })));
    const content = attempts.length === 0 ? el('p', { className: 'hint', text: 'No attempt yet.' })
      : el('table', {},
        el('thead', {}, el('tr', {}, el('th', { text: '#' }), el('th', { text: 'At' }),
          el('th', { text: 'Answer' }), el('th', { text: 'Error' }))),
        el('tbody', {}, ...attempts));
    return el('tr', { className: 'history-row', 'data-testid': 'history', 'data-event-id': e.id },
      el('td', { colspan: 9 }, content));
  }

  async function outboxAction(e, action) {
    if (action === 'discard' && !window.confirm(`Discard event ${e.id} (${e.type} to ${e.destination})?\n\n`
        + 'It will not be sent again unless it is replayed.')) {
      return;
    }
    try {
      const after = await call('POST', `api/outbox/${encodeURIComponent(e.id)}/${action}`);
      notify(`${action === 'replay' ? 'Replayed' : 'Discarded'} event ${e.id}: now ${after.status}.`);
      await loadOutbox();
    } catch (error) {
      showError(error);
    }
  }

  // ------------------------------------------------------------------------------------------------ charts

  async function loadMetrics() {
    const ticket = ++view.requests.metrics;
    const sample = await call('GET', 'api/metrics');
    if (ticket !== view.requests.metrics) return;
    const last = view.samples[view.samples.length - 1];
    if (!last || sample.at > last.at) view.samples.push(sample);
    if (view.samples.length > SAMPLES + 1) view.samples.shift();
    if (view.tab === 'charts') drawCharts(sample);
  }

  /** Per-second rates between successive samples; a counter that went down (a restart) counts as zero. */
  function rates() {
    const out = [];
    for (let i = 1; i < view.samples.length; i++) {
      const a = view.samples[i - 1];
      const b = view.samples[i];
      const dt = (b.at - a.at) / 1000;
      const point = { at: b.at };
      for (const s of SERIES) {
        point[s.outcome] = Math.max(0, b.requests[s.outcome] - a.requests[s.outcome]) / dt;
      }
      out.push(point);
    }
    return out;
  }

  function niceMax(value) {
    if (value <= 0) return 1;
    const power = 10 ** Math.floor(Math.log10(value));
    for (const step of [1, 2, 2.5, 5, 10]) {
      if (value <= step * power) return step * power;
    }
    return 10 * power;
  }

  function drawCharts(sample) {
    const totals = $('totals');
    totals.replaceChildren(...['created', 'replayed', 'mismatch', 'in_progress', 'released'].map((o) => el('div',
      { className: 'card' },
      el('span', { className: 'label', text: o === 'in_progress' ? 'in-progress conflicts' : o }),
      el('span', { className: 'value', 'data-testid': `total-${o}`, text: sample.requests[o] }))));
    drawRates();
    drawKeyAge(sample.replay_key_age);
  }

  function drawRates() {
    const chart = $('rates-chart');
    const points = rates();
    const W = 640; const H = 240; const left = 48; const right = 12; const top = 12; const bottom = 28;
    const max = niceMax(Math.max(0, ...points.flatMap((p) => SERIES.map((s) => p[s.outcome]))));
    const x = (i) => left + (W - left - right) * (i / (SAMPLES - 1));
    const y = (v) => top + (H - top - bottom) * (1 - v / max);
    const nodes = [];
    for (const fraction of [0, 0.5, 1]) {
      const value = max * fraction;
      nodes.push(svg('line', { class: 'grid', x1: left, x2: W - right, y1: y(value), y2: y(value) }));
      nodes.push(svg('text', { class: 'tick', x: left - 6, y: y(value) + 4, 'text-anchor': 'end' },
        +value.toFixed(2)));
    }
    nodes.push(svg('line', { class: 'axis', x1: left, x2: W - right, y1: H - bottom, y2: H - bottom }));
    const span = Math.round(((SAMPLES - 1) * REFRESH_MS) / 1000);
    nodes.push(svg('text', { class: 'tick', x: left, y: H - 8 }, `−${span} s`));
    nodes.push(svg('text', { class: 'tick', x: W - right, y: H - 8, 'text-anchor': 'end' }, 'now'));
    if (points.length < 1) {
      nodes.push(svg('text', { class: 'no-data', x: W / 2, y: H / 2, 'text-anchor': 'middle' },
        'collecting samples…'));
    }
    const offset = SAMPLES - points.length;
    for (const s of SERIES) {
      const coordinates = points.map((p, i) => `${x(offset + i).toFixed(1)},${y(p[s.outcome]).toFixed(1)}`);
      if (coordinates.length === 1) coordinates.unshift(`${x(offset - 1).toFixed(1)},${y(0).toFixed(1)}`);
      if (coordinates.length > 0) {
        nodes.push(svg('polyline', {
          class: `series ${s.outcome}`, points: coordinates.join(' '), 'data-testid': `series-${s.outcome}`,
        }));
      }
    }
    chart.replaceChildren(...nodes);
    const latest = points[points.length - 1];
    $('rates-legend').replaceChildren(...SERIES.map((s) => el('li', {},
      el('span', { className: `swatch ${s.outcome}` }),
      `${s.label}${latest ? `: ${latest[s.outcome].toFixed(2)}/s` : ''}`)));
    // SAMPLES + 1 samples at most: SAMPLES intervals between them, one rate each
    $('rates-window').textContent = `(last ${Math.min(points.length, SAMPLES)} of ${SAMPLES} intervals)`;
  }

  function drawKeyAge(age) {
    const chart = $('age-chart');
    const W = 640; const H = 240; const left = 12; const right = 12; const top = 20; const bottom = 28;
    const bars = age.buckets;
    const max = Math.max(1, ...bars.map((b) => b.count));
    const slot = (W - left - right) / bars.length;
    const nodes = [svg('line', { class: 'axis', x1: left, x2: W - right, y1: H - bottom, y2: H - bottom })];
    bars.forEach((b, i) => {
      const height = ((H - top - bottom) * b.count) / max;
      const x = left + i * slot;
      const label = b.le_seconds === null ? `> ${seconds(bars[i - 1].le_seconds)}` : `≤ ${seconds(b.le_seconds)}`;
      nodes.push(svg('rect', {
        class: 'bar', x: (x + slot * 0.15).toFixed(1), width: (slot * 0.7).toFixed(1),
        y: (H - bottom - height).toFixed(1), height: height.toFixed(1),
        'data-testid': 'age-bar', 'data-count': b.count, 'data-label': label,
      }));
      if (b.count > 0) {
        nodes.push(svg('text', {
          class: 'bar-count', x: (x + slot / 2).toFixed(1), y: (H - bottom - height - 4).toFixed(1),
          'text-anchor': 'middle',
        }, b.count));
      }
      nodes.push(svg('text', { class: 'tick', x: (x + slot / 2).toFixed(1), y: H - 8, 'text-anchor': 'middle' },
        label));
    });
    chart.replaceChildren(...nodes);
    // the max is Micrometer's, kept over a short decaying window (two minutes by default), unlike the counts
    $('age-summary').textContent = age.count === 0 ? '(no replay yet)'
      : `(${age.count} replays, mean ${duration((age.sum_seconds / age.count) * 1000)},`
        + ` recent max ${duration(age.max_seconds * 1000)})`;
    $('age-summary').title = 'The max covers the last few minutes only; the count and the mean cover every replay'
      + ' the registry holds.';
  }

  // ------------------------------------------------------------------------------------------------ wiring

  function wire() {
    $('login-form').addEventListener('submit', (event) => {
      event.preventDefault();
      signIn($('login-key').value.trim());
    });
    $('logout').addEventListener('click', () => signOut(''));
    for (const button of document.querySelectorAll('.tabs [data-tab]')) {
      button.addEventListener('click', () => {
        selectTab(button.dataset.tab);
        refresh();
        if (view.tab === 'charts' && view.samples.length > 0) drawCharts(view.samples[view.samples.length - 1]);
      });
    }
    $('records-form').addEventListener('submit', (event) => {
      event.preventDefault();
      newRecordsSearch();
    });
    $('records-state').addEventListener('change', () => newRecordsSearch());
    $('records-next').addEventListener('click', () => {
      if (!view.recordsNext) return;
      view.recordsCursor = view.recordsNext;
      loadRecords().catch(showError);
    });
    $('records-first').addEventListener('click', () => {
      view.recordsCursor = null;
      loadRecords().catch(showError);
    });
    $('outbox-status').addEventListener('change', () => {
      view.expanded.clear();
      loadOutbox().catch(showError);
    });
    $('outbox-form').addEventListener('submit', (event) => event.preventDefault());
  }

  wire();
  // signed in already: by a key typed earlier in this tab, or by the application's own session
  signIn(sessionStorage.getItem(KEY_STORAGE) || '');
})();
