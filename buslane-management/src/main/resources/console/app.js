// Buslane console: plain JavaScript, no framework, no build step. Every piece of broker data reaches the page
// through textContent or attribute values set on elements built here; innerHTML is never used.
'use strict';

(function () {
  const API = '/console/api';
  const REFRESH_MS = 5000;
  const PHONE = window.matchMedia('(max-width: 760px)');

  const state = {
    namespace: null,
    selected: null, // {kind: 'queue'|'topic'|'subscription', path, topic?, name}
    tab: 'active',
    timer: null,
  };

  // ---------------------------------------------------------------------------------------------- DOM helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k.startsWith('on')) node.addEventListener(k.substring(2), v);
      else if (v === true) node.setAttribute(k, '');
      else node.setAttribute(k, String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function $(id) {
    return document.getElementById(id);
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function toast(message, isError) {
    const t = $('toast');
    t.textContent = message;
    t.className = 'toast' + (isError ? ' toast-error' : '');
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, isError ? 8000 : 3000);
  }

  // ---------------------------------------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.message) || ('HTTP ' + status));
      this.status = status;
      this.code = body && body.error;
    }
  }

  async function api(method, path, body) {
    const opts = {method, credentials: 'same-origin', headers: {'Accept': 'application/json'}};
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(API + path, opts);
    let data = null;
    if (res.status !== 204) {
      const text = await res.text();
      try {
        data = text ? JSON.parse(text) : null;
      } catch (e) {
        data = {error: 'HTTP ' + res.status, message: text.substring(0, 300) || ('HTTP ' + res.status)};
      }
    }
    if (res.status === 401 && path !== '/login') {
      showLogin();
    }
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }

  async function act(promise, success) {
    try {
      const result = await promise;
      if (success) toast(typeof success === 'function' ? success(result) : success);
      return result;
    } catch (e) {
      toast(e.message, true);
      throw e;
    }
  }

  // ---------------------------------------------------------------------------------------------- login

  function showLogin() {
    stopRefresh();
    $('app-view').hidden = true;
    $('login-view').hidden = false;
    $('logout').hidden = true;
    $('menu-toggle').hidden = true;
    $('whoami').textContent = '';
  }

  async function showApp(keyName) {
    $('login-view').hidden = true;
    $('app-view').hidden = false;
    $('logout').hidden = false;
    $('whoami').textContent = keyName;
    updateMenuToggle();
    await refreshTree();
    restoreSelection();
    startRefresh();
  }

  $('login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    $('login-error').textContent = '';
    try {
      const r = await api('POST', '/login', {keyName: $('login-key-name').value, key: $('login-key').value});
      await showApp(r.keyName);
    } catch (e) {
      $('login-error').textContent = e.message;
    }
  });

  $('logout').addEventListener('click', async () => {
    await api('POST', '/logout', {});
    showLogin();
  });

  // ---------------------------------------------------------------------------------------------- tree

  function countBadges(counts, compact) {
    const wrap = el('span', {class: 'badges'});
    wrap.append(el('span', {class: 'badge badge-active', title: 'Active messages', text: String(counts.active)}));
    if (!compact || counts.deadLetter > 0) {
      wrap.append(el('span', {class: 'badge badge-dlq' + (counts.deadLetter > 0 ? ' badge-alert' : ''),
        title: 'Dead-lettered messages', text: String(counts.deadLetter)}));
    }
    if (counts.scheduled > 0) {
      wrap.append(el('span', {class: 'badge badge-scheduled', title: 'Scheduled messages',
        text: String(counts.scheduled)}));
    }
    return wrap;
  }

  function treeItem(item, kind, label, extra) {
    const selected = state.selected && state.selected.kind === kind && state.selected.path === item.path;
    const counts = kind === 'topic' ? {active: item.counts.scheduled, deadLetter: 0, scheduled: 0} : item.counts;
    const button = el('button', {
      type: 'button', class: 'tree-item tree-' + kind + (selected ? ' selected' : ''),
      'data-path': item.path, 'data-kind': kind, 'aria-current': selected ? 'true' : null,
      onclick: () => select(Object.assign({kind, path: item.path, name: item.name}, extra || {})),
    }, el('span', {class: 'tree-label', text: label}),
    kind === 'topic' ? el('span', {class: 'badges'}) : countBadges(counts, true));
    return el('li', {}, button);
  }

  function renderTree() {
    const ns = state.namespace;
    const tree = clear($('tree'));
    tree.append(el('h2', {class: 'tree-heading', text: 'Queues'}));
    const queues = el('ul', {class: 'tree-list', id: 'tree-queues'});
    ns.queues.forEach((q) => queues.append(treeItem(q, 'queue', q.name)));
    if (!ns.queues.length) queues.append(el('li', {class: 'muted tree-empty', text: 'No queues'}));
    tree.append(queues);
    tree.append(el('h2', {class: 'tree-heading', text: 'Topics'}));
    const topics = el('ul', {class: 'tree-list', id: 'tree-topics'});
    ns.topics.forEach((t) => {
      const li = treeItem(t, 'topic', t.name);
      const subs = el('ul', {class: 'tree-list tree-subs'});
      t.subscriptions.forEach((s) => subs.append(treeItem(s, 'subscription', s.name, {topic: t.name})));
      li.append(subs);
      topics.append(li);
    });
    if (!ns.topics.length) topics.append(el('li', {class: 'muted tree-empty', text: 'No topics'}));
    tree.append(topics);
  }

  async function refreshTree() {
    state.namespace = await api('GET', '/namespace');
    state.cluster = await api('GET', '/cluster');
    renderTree();
    updateHeaderCounts();
    $('refresh-status').textContent = 'Updated ' + new Date().toLocaleTimeString();
  }

  function startRefresh() {
    stopRefresh();
    state.timer = setInterval(() => {
      if (document.hidden) return;
      refreshTree().catch(() => { $('refresh-status').textContent = 'Offline'; });
    }, REFRESH_MS);
  }

  function stopRefresh() {
    if (state.timer) clearInterval(state.timer);
    state.timer = null;
  }

  function findEntity(sel) {
    const ns = state.namespace;
    if (!ns || !sel) return null;
    if (sel.kind === 'queue') return ns.queues.find((q) => q.path === sel.path) || null;
    if (sel.kind === 'topic') return ns.topics.find((t) => t.path === sel.path) || null;
    const topic = ns.topics.find((t) => t.name === sel.topic);
    return topic ? topic.subscriptions.find((s) => s.path === sel.path) || null : null;
  }

  // ---------------------------------------------------------------------------------------------- phone menu

  function updateMenuToggle() {
    const phone = PHONE.matches;
    const toggle = $('menu-toggle');
    toggle.hidden = !phone || $('app-view').hidden;
    if (!phone) {
      $('sidebar').classList.remove('collapsed');
    } else if (state.selected) {
      $('sidebar').classList.add('collapsed');
    }
    toggle.setAttribute('aria-expanded', String(!$('sidebar').classList.contains('collapsed')));
  }

  $('menu-toggle').addEventListener('click', () => {
    $('sidebar').classList.toggle('collapsed');
    $('menu-toggle').setAttribute('aria-expanded', String(!$('sidebar').classList.contains('collapsed')));
  });
  PHONE.addEventListener('change', updateMenuToggle);

  // ---------------------------------------------------------------------------------------------- selection

  function select(sel, tab) {
    state.selected = sel;
    state.tab = tab || (sel.kind === 'topic' ? 'scheduled' : 'active');
    writeHash();
    renderTree();
    renderEntity();
    if (PHONE.matches) {
      $('sidebar').classList.add('collapsed');
      updateMenuToggle();
    }
  }

  // the hash names the selected entity and tab: #kind/path/topic/tab (each part URI-encoded), for links and reloads
  function writeHash() {
    const sel = state.selected;
    history.replaceState(null, '', '#' + [sel.kind, sel.path, sel.topic || '', state.tab]
      .map(encodeURIComponent).join('/'));
  }

  function restoreSelection() {
    const parts = location.hash.replace(/^#/, '').split('/').map(decodeURIComponent);
    if (parts.length >= 2) {
      const sel = {kind: parts[0], path: parts[1], topic: parts[2] || undefined};
      const found = findEntity(sel);
      if (found) {
        sel.name = found.name;
        select(sel, parts[3] || undefined);
        return;
      }
    }
    renderWelcome();
  }

  function renderWelcome() {
    const c = clear($('content'));
    c.append(el('div', {class: 'card'},
      el('h1', {text: 'Namespace'}),
      el('p', {class: 'muted', text: 'Pick a queue, topic or subscription, or create one.'}),
      el('p', {}, 'Queues: ', String(state.namespace.queues.length), ' \u00b7 Topics: ',
        String(state.namespace.topics.length))));
    if (state.cluster && state.cluster.clustered) c.append(clusterCard(state.cluster));
  }

  // Cluster mode: this node, the live nodes and which node serves each shard.
  function clusterCard(cl) {
    const table = el('table', {class: 'cluster', id: 'cluster-shards'},
      el('thead', {}, el('tr', {}, el('th', {text: 'Node'}), el('th', {text: 'Shards'}))));
    const body = el('tbody');
    cl.liveNodes.forEach((n) => {
      const shards = cl.shards.filter((s) => s.node === n).map((s) => s.shard);
      body.append(el('tr', {}, el('td', {text: n + (n === cl.node ? ' (this node)' : '')}),
        el('td', {text: shards.length ? shards.join(', ') : '\u2014'})));
    });
    const unserved = cl.shards.filter((s) => !s.node).map((s) => s.shard);
    if (unserved.length) {
      body.append(el('tr', {}, el('td', {class: 'muted', text: 'moving'}), el('td', {text: unserved.join(', ')})));
    }
    table.append(body);
    return el('div', {class: 'card', id: 'cluster-card'}, el('h2', {text: 'Cluster'}),
      el('p', {class: 'muted', text: cl.liveNodes.length + ' live nodes, ' + cl.shardCount + ' shards'}), table);
  }

  // Cluster mode: where an entity's partitions are served ("shard 3 on node-b").
  function placement(entity) {
    const cl = state.cluster;
    if (!cl || !cl.clustered || !entity.shards) return null;
    const where = entity.shards.map((k, i) => {
      const s = cl.shards.find((x) => x.shard === k);
      return (entity.shards.length > 1 ? 'partition ' + i + ': ' : '') + 'shard ' + k + ' on '
        + (s && s.node ? s.node : 'no node (moving)');
    });
    return el('p', {class: 'muted', id: 'entity-placement', text: where.join(' \u00b7 ')});
  }

  function updateHeaderCounts() {
    const holder = $('entity-counts');
    if (!holder || !state.selected) return;
    const entity = findEntity(state.selected);
    if (!entity) return;
    clear(holder).append(countsTable(entity.counts, state.selected.kind));
  }

  function countsTable(c, kind) {
    const dl = el('dl', {class: 'counts'});
    const add = (label, value, id) => dl.append(el('div', {class: 'count'},
      el('dt', {text: label}), el('dd', {id, text: String(value)})));
    if (kind !== 'topic') {
      add('Active', c.active, 'count-active');
      add('Dead-lettered', c.deadLetter, 'count-deadletter');
    }
    add('Scheduled', c.scheduled, 'count-scheduled');
    if (c.transferDeadLetter > 0) add('Transfer DLQ', c.transferDeadLetter, 'count-transferdeadletter');
    add('Size', formatBytes(c.sizeInBytes), 'count-size');
    return dl;
  }

  function formatBytes(n) {
    if (n < 1024) return n + ' B';
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KB';
    return (n / 1024 / 1024).toFixed(1) + ' MB';
  }

  // ---------------------------------------------------------------------------------------------- entity view

  function renderEntity() {
    const sel = state.selected;
    const entity = findEntity(sel);
    const c = clear($('content'));
    if (!entity) {
      renderWelcome();
      return;
    }
    const kindLabel = {queue: 'Queue', topic: 'Topic', subscription: 'Subscription'}[sel.kind];
    const header = el('div', {class: 'entity-header'},
      el('div', {},
        el('div', {class: 'kind', text: kindLabel + (entity.requiresSession ? ' \u00b7 sessions' : '')
          + (entity.status && entity.status !== 'Active' ? ' \u00b7 ' + entity.status : '')}),
        el('h1', {id: 'entity-title', text: sel.path})),
      el('div', {class: 'entity-actions'},
        el('button', {type: 'button', id: 'refresh-entity', onclick: () => refreshAll()}, 'Refresh'),
        el('button', {type: 'button', class: 'danger', id: 'delete-entity', onclick: deleteEntity},
          'Delete ' + kindLabel.toLowerCase())));
    c.append(header, el('div', {id: 'entity-counts'}, countsTable(entity.counts, sel.kind)));
    const owner = placement(sel.kind === 'subscription'
      ? findEntity({kind: 'topic', path: sel.topic}) || entity : entity);
    if (owner) c.append(owner);

    const tabs = sel.kind === 'topic'
      ? [['scheduled', 'Scheduled'], ['send', 'Send'], ['subscriptions', 'Subscriptions']]
      : sel.kind === 'queue'
        ? [['active', 'Messages'], ['deadletter', 'Dead-letter'], ['sessions', 'Sessions'], ['send', 'Send']]
        : [['active', 'Messages'], ['deadletter', 'Dead-letter'], ['sessions', 'Sessions'], ['rules', 'Rules']];
    const bar = el('div', {class: 'tabs', role: 'tablist'});
    tabs.forEach(([id, label]) => bar.append(el('button', {
      type: 'button', role: 'tab', id: 'tab-' + id, class: 'tab' + (state.tab === id ? ' active' : ''),
      'aria-selected': String(state.tab === id),
      onclick: () => { state.tab = id; writeHash(); renderEntity(); },
    }, label)));
    c.append(bar);
    const panel = el('div', {class: 'panel', id: 'panel'});
    c.append(panel);
    switch (state.tab) {
      case 'active': renderMessages(panel, 'main'); break;
      case 'scheduled': renderMessages(panel, 'main'); break;
      case 'deadletter': renderMessages(panel, 'deadletter'); break;
      case 'sessions': renderSessions(panel); break;
      case 'send': renderSend(panel); break;
      case 'subscriptions': renderSubscriptions(panel, entity); break;
      case 'rules': renderRules(panel, entity); break;
      default: break;
    }
  }

  async function refreshAll() {
    await refreshTree();
    renderEntity();
  }

  async function deleteEntity() {
    const sel = state.selected;
    if (!confirm('Delete ' + sel.kind + ' "' + sel.path + '" and all its messages?')) return;
    const req = {kind: sel.kind, name: sel.name};
    if (sel.kind === 'subscription') req.topic = sel.topic;
    await act(api('POST', '/entities/delete', req), 'Deleted ' + sel.path);
    state.selected = null;
    history.replaceState(null, '', '#');
    await refreshTree();
    renderWelcome();
    updateMenuToggle();
  }

  // ---------------------------------------------------------------------------------------------- messages

  async function renderMessages(panel, subQueue) {
    const sel = state.selected;
    const toolbar = el('div', {class: 'toolbar'},
      el('button', {type: 'button', id: 'reload-messages', onclick: () => renderEntity()}, 'Reload'),
      sel.kind !== 'topic' ? el('button', {type: 'button', class: 'danger', id: 'purge', onclick: async () => {
        const what = subQueue === 'deadletter' ? 'dead-letter queue' : 'queue';
        if (!confirm('Delete every message in the ' + what + ' of "' + sel.path + '"?')) return;
        await act(api('POST', '/purge', {entity: sel.path, subQueue}), (r) => 'Purged ' + r.deleted + (r.deleted === 1 ? ' message' : ' messages'));
        await refreshAll();
      }}, subQueue === 'deadletter' ? 'Purge dead-letter queue' : 'Purge') : null);
    panel.append(toolbar);
    const list = el('div', {class: 'messages', id: 'messages'}, el('p', {class: 'muted', text: 'Loading\u2026'}));
    panel.append(list);
    clear(list);
    await loadMessages(list, sel, subQueue, 0);
  }

  async function loadMessages(list, sel, subQueue, from) {
    let result;
    try {
      result = await api('GET', '/messages?entity=' + encodeURIComponent(sel.path) + '&subQueue=' + subQueue
        + '&from=' + from + '&max=100');
    } catch (e) {
      list.append(el('p', {class: 'error', text: e.message}));
      return;
    }
    const shown = sel.kind === 'topic' ? result.messages.filter((m) => m.state === 'Scheduled') : result.messages;
    if (!shown.length && from === 0) {
      list.append(el('p', {class: 'muted empty', id: 'no-messages', text: 'No messages.'}));
      return;
    }
    shown.forEach((m) => list.append(messageCard(m, subQueue)));
    if (result.next) {
      const more = el('button', {type: 'button', id: 'load-more', class: 'load-more', onclick: async () => {
        more.remove();
        await loadMessages(list, sel, subQueue, result.next);
      }}, 'Load more');
      list.append(more);
    }
  }

  function messageCard(m, subQueue) {
    const sel = state.selected;
    const sys = m.system || {};
    const summary = el('summary', {class: 'message-summary'},
      el('span', {class: 'seq', text: '#' + m.sequenceNumber}),
      el('span', {class: 'state state-' + m.state.toLowerCase(), text: m.state}),
      el('span', {class: 'message-id', text: sys.MessageId || ''}),
      sys.SessionId ? el('span', {class: 'session-chip', text: 'session ' + sys.SessionId}) : null,
      el('span', {class: 'time', text: m.scheduledEnqueueTime && m.state === 'Scheduled'
        ? 'at ' + m.scheduledEnqueueTime : m.enqueuedTime}));
    const details = el('details', {class: 'message card', 'data-seq': String(m.sequenceNumber)}, summary);

    const actions = el('div', {class: 'message-actions'});
    const after = async () => { await refreshAll(); };
    if (m.state === 'Scheduled') {
      actions.append(el('button', {type: 'button', class: 'action-cancel', onclick: async () => {
        await act(api('POST', '/cancel-scheduled', {entity: sel.path, sequenceNumber: m.sequenceNumber}),
          'Cancelled #' + m.sequenceNumber);
        await after();
      }}, 'Cancel scheduled'));
    } else if (subQueue === 'deadletter') {
      const target = sel.kind === 'subscription' ? sel.topic : sel.path;
      actions.append(el('button', {type: 'button', class: 'primary action-resubmit', onclick: async () => {
        await act(api('POST', '/resubmit', {entity: sel.path, subQueue, sequenceNumber: m.sequenceNumber}),
          (r) => 'Resubmitted #' + m.sequenceNumber + ' to ' + r.resubmittedTo
            + (r.newMessageId ? ' as message ' + r.messageId + ' (duplicate detection is on)' : ''));
        await after();
      }}, 'Resubmit to ' + target));
    } else {
      actions.append(el('button', {type: 'button', class: 'action-deadletter', onclick: async () => {
        await act(api('POST', '/dead-letter', {entity: sel.path, sequenceNumber: m.sequenceNumber}),
          'Dead-lettered #' + m.sequenceNumber);
        await after();
      }}, 'Dead-letter'));
    }
    if (m.state !== 'Scheduled') {
      actions.append(el('button', {type: 'button', class: 'danger action-delete', onclick: async () => {
        if (!confirm('Delete message #' + m.sequenceNumber + '?')) return;
        await act(api('POST', '/delete-message', {entity: sel.path, subQueue, sequenceNumber: m.sequenceNumber}),
          'Deleted #' + m.sequenceNumber);
        await after();
      }}, 'Delete'));
    }

    const broker = [['Sequence number', m.sequenceNumber], ['State', m.state], ['Enqueued', m.enqueuedTime],
      ['Delivery count', m.deliveryCount], ['Expires', m.expiresAt], ['Scheduled for', m.scheduledEnqueueTime],
      ['Locked until', m.lockedUntil], ['Dead-letter source', m.deadLetterSource]];
    const systemRows = broker.filter(([, v]) => v !== undefined && v !== null)
      .concat(Object.entries(sys));
    const props = m.properties || [];
    details.append(el('div', {class: 'message-body-grid'},
      el('section', {class: 'props'},
        el('h3', {text: 'System properties'}), kvTable(systemRows, 'system-props'),
        el('h3', {text: 'Application properties'}),
        props.length ? kvTable(props.map((p) => [p.name, p.value, p.type]), 'app-props')
          : el('p', {class: 'muted', text: 'None'})),
      el('section', {class: 'body'},
        el('h3', {}, 'Body ', el('span', {class: 'muted body-kind',
          text: '(' + m.body.kind + ', ' + m.body.size + ' bytes' + (m.body.section !== 'data'
            ? ', amqp-' + m.body.section : '') + ')'})),
        el('pre', {class: 'body-content body-' + m.body.kind},
          m.body.kind === 'binary' ? m.body.hex : m.body.text),
        m.body.truncated ? el('p', {class: 'muted', text: 'Truncated for display.'}) : null)),
    actions);
    return details;
  }

  function kvTable(rows, cls) {
    const table = el('table', {class: 'kv ' + cls});
    const body = el('tbody');
    rows.forEach(([k, v, type]) => body.append(el('tr', {},
      el('th', {scope: 'row', text: k}),
      el('td', {}, el('span', {class: 'value', text: String(v)}),
        type ? el('span', {class: 'type', text: type}) : null))));
    table.append(body);
    return table;
  }

  // ---------------------------------------------------------------------------------------------- sessions

  async function renderSessions(panel) {
    const sel = state.selected;
    panel.append(el('p', {class: 'muted', text: 'Loading\u2026'}));
    let r;
    try {
      r = await api('GET', '/sessions?entity=' + encodeURIComponent(sel.path));
    } catch (e) {
      clear(panel).append(el('p', {class: 'error', text: e.message}));
      return;
    }
    clear(panel);
    if (!r.requiresSession) {
      panel.append(el('p', {class: 'muted', text: 'This entity does not require sessions.'}));
      return;
    }
    if (!r.sessions.length) {
      panel.append(el('p', {class: 'muted', text: 'No sessions with messages or state.'}));
      return;
    }
    const table = el('table', {class: 'grid', id: 'sessions'});
    table.append(el('thead', {}, el('tr', {}, el('th', {text: 'Session'}), el('th', {text: 'Locked'}),
      el('th', {text: 'State'}))));
    const body = el('tbody');
    r.sessions.forEach((s) => body.append(el('tr', {},
      el('td', {text: s.sessionId}),
      el('td', {text: s.locked ? 'yes' : 'no'}),
      el('td', {}, s.state ? el('pre', {class: 'body-content',
        text: s.state.kind === 'binary' ? s.state.hex : s.state.text}) : el('span', {class: 'muted', text: 'none'})))));
    table.append(body);
    panel.append(el('div', {class: 'table-scroll'}, table));
  }

  // ---------------------------------------------------------------------------------------------- send

  function renderSend(panel) {
    const sel = state.selected;
    const entity = findEntity(sel);
    const propsBox = el('div', {class: 'prop-rows', id: 'send-props'});
    const addPropRow = () => {
      const row = el('div', {class: 'prop-row'},
        el('input', {class: 'prop-name', placeholder: 'name', 'aria-label': 'Property name'}),
        el('select', {class: 'prop-type', 'aria-label': 'Property type'},
          el('option', {value: 'string', text: 'string'}), el('option', {value: 'number', text: 'number'}),
          el('option', {value: 'boolean', text: 'boolean'})),
        el('input', {class: 'prop-value', placeholder: 'value', 'aria-label': 'Property value'}),
        el('button', {type: 'button', class: 'link-button', onclick: () => row.remove()}, 'Remove'));
      propsBox.append(row);
    };
    addPropRow();
    const form = el('form', {class: 'send-form', id: 'send-form'},
      el('label', {class: 'wide'}, 'Body', el('textarea', {id: 'send-body', rows: '6', spellcheck: 'false'})),
      el('label', {}, 'Content type', el('input', {id: 'send-content-type', list: 'content-types',
        placeholder: 'application/json'})),
      el('datalist', {id: 'content-types'}, el('option', {value: 'application/json'}),
        el('option', {value: 'text/plain'})),
      el('label', {}, 'Session id' + (entity && entity.requiresSession ? ' (required)' : ''),
        el('input', {id: 'send-session-id'})),
      el('label', {}, 'Message id', el('input', {id: 'send-message-id', placeholder: 'generated'})),
      el('label', {}, 'Subject', el('input', {id: 'send-subject'})),
      el('label', {}, 'Correlation id', el('input', {id: 'send-correlation-id'})),
      el('label', {}, 'Scheduled for (local time)', el('input', {id: 'send-scheduled', type: 'datetime-local',
        step: '1'})),
      el('fieldset', {class: 'wide'}, el('legend', {text: 'Application properties'}), propsBox,
        el('button', {type: 'button', id: 'send-add-prop', onclick: addPropRow}, '+ Property')),
      el('div', {class: 'wide'}, el('button', {type: 'submit', class: 'primary', id: 'send-submit'}, 'Send')));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const properties = {};
      for (const row of propsBox.querySelectorAll('.prop-row')) {
        const name = row.querySelector('.prop-name').value.trim();
        if (!name) continue;
        const raw = row.querySelector('.prop-value').value;
        const type = row.querySelector('.prop-type').value;
        if (type === 'number') {
          const n = Number(raw);
          if (raw.trim() === '' || Number.isNaN(n)) {
            toast('Property ' + name + ' is not a number', true);
            return;
          }
          properties[name] = n;
        } else if (type === 'boolean') {
          properties[name] = raw.trim().toLowerCase() === 'true';
        } else {
          properties[name] = raw;
        }
      }
      const scheduled = $('send-scheduled').value;
      const req = {
        entity: sel.path, body: $('send-body').value, contentType: $('send-content-type').value || null,
        sessionId: $('send-session-id').value || null, messageId: $('send-message-id').value || null,
        subject: $('send-subject').value || null, correlationId: $('send-correlation-id').value || null,
        properties, scheduledEnqueueTime: scheduled ? new Date(scheduled).toISOString() : null,
      };
      await act(api('POST', '/send', req), (r) => r.scheduled
        ? 'Scheduled as #' + r.sequenceNumber : 'Sent to ' + sel.path);
      await refreshTree();
    });
    panel.append(form);
  }

  // ---------------------------------------------------------------------------------------------- create / rules

  function nameForm(id, title, fields, submit) {
    const c = clear($('content'));
    const form = el('form', {class: 'card create-form', id},
      el('h1', {text: title}), ...fields,
      el('div', {class: 'form-actions'},
        el('button', {type: 'submit', class: 'primary', id: id + '-submit'}, 'Create'),
        el('button', {type: 'button', onclick: () => (state.selected ? renderEntity() : renderWelcome())},
          'Cancel')));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      await submit(form);
    });
    c.append(form);
    const first = form.querySelector('input');
    if (first) first.focus();
    if (PHONE.matches) {
      $('sidebar').classList.add('collapsed');
      updateMenuToggle();
    }
  }

  function entityFields(prefix, withSessions) {
    return [
      el('label', {}, 'Name', el('input', {id: prefix + '-name', required: true})),
      withSessions ? el('label', {class: 'check'}, el('input', {id: prefix + '-sessions', type: 'checkbox'}),
        'Requires sessions') : null,
      withSessions ? el('label', {}, 'Max delivery count', el('input', {id: prefix + '-mdc', type: 'number',
        min: '1', value: '10'})) : null,
    ];
  }

  $('new-queue').addEventListener('click', () => nameForm('create-queue', 'New queue',
    entityFields('queue', true), async () => {
      const name = $('queue-name').value.trim();
      await act(api('POST', '/entities/create', {kind: 'queue', name, requiresSession: $('queue-sessions').checked,
        maxDeliveryCount: Number($('queue-mdc').value) || 10}), 'Created queue ' + name);
      await refreshTree();
      select({kind: 'queue', path: name, name});
    }));

  $('new-topic').addEventListener('click', () => nameForm('create-topic', 'New topic',
    entityFields('topic', false), async () => {
      const name = $('topic-name').value.trim();
      await act(api('POST', '/entities/create', {kind: 'topic', name}), 'Created topic ' + name);
      await refreshTree();
      select({kind: 'topic', path: name, name});
    }));

  function renderSubscriptions(panel, topic) {
    const sel = state.selected;
    const list = el('ul', {class: 'plain-list'});
    topic.subscriptions.forEach((s) => list.append(el('li', {},
      el('button', {type: 'button', class: 'link-button', onclick: () => select({kind: 'subscription',
        path: s.path, name: s.name, topic: sel.name})}, s.name), ' ', countBadges(s.counts, false))));
    if (!topic.subscriptions.length) list.append(el('li', {class: 'muted', text: 'No subscriptions.'}));
    const form = el('form', {class: 'inline-form', id: 'create-subscription'},
      ...entityFields('sub', true),
      el('button', {type: 'submit', class: 'primary', id: 'create-subscription-submit'}, 'Add subscription'));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = $('sub-name').value.trim();
      await act(api('POST', '/entities/create', {kind: 'subscription', topic: sel.name, name,
        requiresSession: $('sub-sessions').checked, maxDeliveryCount: Number($('sub-mdc').value) || 10}),
      'Created subscription ' + name);
      await refreshAll();
      state.tab = 'subscriptions';
      renderEntity();
    });
    panel.append(list, el('h3', {text: 'New subscription'}), form);
  }

  function renderRules(panel, sub) {
    const sel = state.selected;
    const table = el('table', {class: 'grid', id: 'rules'});
    table.append(el('thead', {}, el('tr', {}, el('th', {text: 'Rule'}), el('th', {text: 'Filter'}),
      el('th', {text: 'Action'}), el('th', {}))));
    const body = el('tbody');
    sub.rules.forEach((r) => body.append(el('tr', {},
      el('td', {text: r.name}), el('td', {}, el('code', {text: r.filter})),
      el('td', {}, r.action ? el('code', {text: r.action}) : el('span', {class: 'muted', text: 'none'})),
      el('td', {}, el('button', {type: 'button', class: 'danger', onclick: async () => {
        if (!confirm('Delete rule "' + r.name + '"?')) return;
        await act(api('POST', '/entities/delete', {kind: 'rule', topic: sel.topic, subscription: sel.name,
          name: r.name}), 'Deleted rule ' + r.name);
        await refreshAll();
      }}, 'Delete')))));
    table.append(body);
    const form = el('form', {class: 'inline-form', id: 'create-rule'},
      el('label', {}, 'Name', el('input', {id: 'rule-name', required: true})),
      el('label', {}, 'SQL filter', el('input', {id: 'rule-sql', placeholder: "color = 'red'"})),
      el('label', {}, 'or correlation id', el('input', {id: 'rule-correlation'})),
      el('label', {}, 'SQL action (optional)', el('input', {id: 'rule-action', placeholder: "SET x = 1"})),
      el('button', {type: 'submit', class: 'primary'}, 'Add rule'));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = $('rule-name').value.trim();
      await act(api('POST', '/entities/create', {kind: 'rule', topic: sel.topic, subscription: sel.name, name,
        sqlFilter: $('rule-sql').value || null, correlationId: $('rule-correlation').value || null,
        action: $('rule-action').value || null}), 'Created rule ' + name);
      await refreshAll();
    });
    panel.append(el('div', {class: 'table-scroll'}, table), el('h3', {text: 'New rule'}), form);
  }

  // ---------------------------------------------------------------------------------------------- start

  async function start() {
    try {
      const me = await api('GET', '/whoami');
      await showApp(me.keyName);
      if (me.open) {
        $('logout').hidden = true;
        $('whoami').textContent = 'no log-in needed (--insecure)';
      }
    } catch (e) {
      if (e.status !== 401) {
        $('login-error').textContent = e.message;
      }
      showLogin();
    }
  }

  start();
})();
