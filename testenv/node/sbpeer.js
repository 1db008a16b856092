'use strict';
// sbpeer: a small AMQP 1.0 peer that speaks enough of Azure Service Bus's
// protocol for azservicebus (Go) senders and receivers used with
// UseDevelopmentEmulator=true (plain amqp://, no TLS), for jobclock's tests.
//
//   node sbpeer.js [amqpPort=0] [host=127.0.0.1] [httpPort=0]
//
// It prints one JSON line per event on stdout; the first is
//   {"ev":"listening","host":...,"port":<amqp>,"http":<http>,"pid":...}
//
// What it does:
//   * CBS put-token on $cbs: checks the SharedAccessSignature against the keys
//     registered over HTTP (or in SB_KEYS="name=key,..."); no keys at all means
//     every token is accepted. Replies 202, or 401 for a wrong or unknown key.
//   * Queues and topics exist implicitly, except entity names that start with
//     SB_MISSING_PREFIX (default "missing-"): their attach is refused with
//     amqp:not-found, as Service Bus does for an entity that does not exist.
//   * Links that receive from clients advertise max-message-size
//     SB_MAX_MESSAGE_SIZE (default 262144, the Standard tier's 256 KiB).
//   * Every message sent to an entity is stored, fanned out to topic
//     subscriptions (SUBS="topic:sub,..." or created by a receiver attach),
//     delivered to receivers, and recorded for the HTTP API.
//   * $management requests get 501 (not implemented).
//
// HTTP API (loopback, JSON):
//   GET  /messages?address=<entity>  messages received on that entity, oldest first
//   GET  /stats                      {connections_opened, connections_open,
//                                     connections_by_key: {keyName: n}, attaches: {address: n},
//                                     cpu_us: processor time the peer has used, in µs}
//   POST /keys  {"name":..,"key":..} register a SAS key
//   POST /reset                      forget recorded messages and counters
const rhea = require('rhea');
const crypto = require('crypto');
const http = require('http');

const port = Number(process.argv[2] || 0);
const host = process.argv[3] || '127.0.0.1';
const httpPort = Number(process.argv[4] || 0);
const missingPrefix = (process.env.SB_MISSING_PREFIX || 'missing-').toLowerCase();
const maxMessageSize = Number(process.env.SB_MAX_MESSAGE_SIZE || 262144);

const store = new Map(); // address -> [{message, seq, enqueued}] waiting for receivers
const received = new Map(); // address -> [record] everything ever sent (for the HTTP API)
const subs = new Map(); // topic -> Set(subscription address)
const replyLinks = new Map(); // reply-to address -> sender link ($cbs / $management)
const waiting = new Map(); // address -> Set(sender link)
const keys = new Map((process.env.SB_KEYS || '').split(',').filter(Boolean).map((kv) => kv.split(/=(.*)/s).slice(0, 2)));
let seq = 0;
let stats = newStats();
let openConnections = 0;

function newStats() {
  return { connections_opened: 0, connections_by_key: {}, attaches: {} };
}
// log writes one event line at once. logSoon queues the lines of events
// that come once per message and writes them together at most 50 ms later
// (and at exit), so that the peer makes one write per message (its
// disposition), not two: under load the log's writes took a tenth of the
// peer's time.
function log(obj) {
  flushLog();
  process.stdout.write(JSON.stringify(obj) + '\n');
}
let pendingLog = [];
let logTimer = null;
function logSoon(obj) {
  pendingLog.push(JSON.stringify(obj));
  if (logTimer === null) logTimer = setTimeout(flushLog, 50);
}
function flushLog() {
  if (logTimer !== null) {
    clearTimeout(logTimer);
    logTimer = null;
  }
  if (pendingLog.length === 0) return;
  const text = pendingLog.join('\n') + '\n';
  pendingLog = [];
  process.stdout.write(text);
}
for (const pair of (process.env.SUBS || '').split(',').filter(Boolean)) {
  const [t, s] = pair.split(':');
  addSub(t, `${t}/Subscriptions/${s}`);
}
function addSub(topic, addr) {
  if (!subs.has(topic.toLowerCase())) subs.set(topic.toLowerCase(), new Set());
  subs.get(topic.toLowerCase()).add(addr.toLowerCase());
}
function q(addr) {
  const k = addr.toLowerCase();
  if (!store.has(k)) store.set(k, []);
  return store.get(k);
}
function isSystem(addr) {
  return addr === '$cbs' || addr.endsWith('/$management');
}
function isMissing(addr) {
  return addr.toLowerCase().startsWith(missingPrefix);
}

// Echo the remote terminus (address and filter only: go-amqp rejects rhea's
// re-encoding of the full terminus) and the settle modes (go-amqp checks them).
function echo(link) {
  const ra = link.remote.attach;
  if (ra.source) link.set_source(ra.source.filter ? { address: ra.source.address, filter: ra.source.filter } : { address: ra.source.address });
  if (ra.target) link.set_target({ address: ra.target.address });
  link.local.attach.snd_settle_mode = ra.snd_settle_mode;
  link.local.attach.rcv_settle_mode = ra.rcv_settle_mode;
}
// refuse answers an attach for an entity that does not exist: an attach with
// no terminus, then a detach carrying the error.
function refuse(link, addr) {
  link.local.attach.source = null;
  link.local.attach.target = null;
  link.close({ condition: 'amqp:not-found', description: `The messaging entity '${addr}' could not be found.` });
  log({ ev: 'refused', addr });
}
function countAttach(addr) {
  const k = addr.toLowerCase();
  stats.attaches[k] = (stats.attaches[k] || 0) + 1;
}
function pump(addr) {
  const links = waiting.get(addr.toLowerCase());
  if (!links) return;
  const list = q(addr);
  for (const s of links) {
    while (s.sendable() && list.length) {
      const item = list.shift();
      const m = Object.assign({}, item.message);
      m.message_annotations = Object.assign({}, m.message_annotations || {}, {
        'x-opt-sequence-number': rhea.types.wrap_long(item.seq), // azservicebus asserts int64
        'x-opt-enqueued-time': item.enqueued, // Date -> AMQP timestamp
        'x-opt-locked-until': new Date(Date.now() + 60000),
      });
      const d = s.send(m, crypto.randomBytes(16)); // 16-byte tag == lock token
      d.sbItem = item;
      d.sbAddr = addr;
    }
  }
}

const container = rhea.create_container({ id: 'sbpeer' });
container.on('connection_open', (ctx) => {
  stats.connections_opened++;
  openConnections++;
  ctx.connection.sbKeys = new Set();
  log({ ev: 'connection', open: openConnections });
});
container.on('disconnected', (ctx) => {
  if (ctx.connection.sbCounted !== true) {
    ctx.connection.sbCounted = true;
    openConnections--;
  }
  for (const set of waiting.values()) for (const l of set) if (l.connection === ctx.connection) set.delete(l);
  for (const [k, v] of replyLinks) if (v.connection === ctx.connection) replyLinks.delete(k);
});
container.on('connection_close', (ctx) => {
  if (ctx.connection.sbCounted !== true) {
    ctx.connection.sbCounted = true;
    openConnections--;
  }
});
container.on('receiver_open', (ctx) => {
  const l = ctx.receiver;
  const addr = (l.remote.attach.target || {}).address || '';
  if (!isSystem(addr) && isMissing(addr)) return refuse(l, addr);
  echo(l);
  l.local.attach.max_message_size = maxMessageSize;
  if (!isSystem(addr)) countAttach(addr);
  log({ ev: 'attach-in', addr });
});
container.on('sender_open', (ctx) => {
  const s = ctx.sender;
  const src = (s.remote.attach.source || {}).address || '';
  const tgt = (s.remote.attach.target || {}).address || '';
  if (isSystem(src)) {
    echo(s);
    replyLinks.set(tgt, s);
    return;
  }
  if (isMissing(src)) return refuse(s, src);
  echo(s);
  countAttach(src);
  const m = /^(.*)\/subscriptions\/[^/]+$/i.exec(src);
  if (m) addSub(m[1], src);
  const k = src.toLowerCase();
  if (!waiting.has(k)) waiting.set(k, new Set());
  waiting.get(k).add(s);
  s.sbAddr = src;
  log({ ev: 'attach-out', addr: src });
});
container.on('sendable', (ctx) => {
  if (ctx.sender.sbAddr) pump(ctx.sender.sbAddr);
});
container.on('sender_close', (ctx) => {
  for (const set of waiting.values()) set.delete(ctx.sender);
  for (const [k, v] of replyLinks) if (v === ctx.sender) replyLinks.delete(k);
});
container.on('accepted', (ctx) => ctx.delivery.update(true)); // PeekLock complete (rcv-settle-mode second)
container.on('released', (ctx) => {
  const d = ctx.delivery;
  if (d.sbItem) {
    q(d.sbAddr).unshift(d.sbItem);
    pump(d.sbAddr);
  }
  d.update(true);
});
container.on('rejected', (ctx) => {
  const d = ctx.delivery;
  if (d.sbItem) q(d.sbAddr + '/$deadletterqueue').push(d.sbItem);
  d.update(true);
});
container.on('error', (err) => log({ ev: 'error', error: String(err && err.message) }));

function bodyOf(msg) {
  const b = msg.body;
  if (b && b.typecode === 0x75) return { body: Buffer.from(b.content).toString('utf8'), body_base64: Buffer.from(b.content).toString('base64'), body_section: 'data' };
  if (Buffer.isBuffer(b)) return { body: b.toString('utf8'), body_base64: b.toString('base64'), body_section: 'value' };
  return { body: b, body_section: 'value' };
}
function typesOf(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj || {})) out[k] = v instanceof Date ? 'timestamp' : typeof v;
  return out;
}

container.on('message', (ctx) => {
  const addr = (ctx.receiver.remote.attach.target || {}).address || '';
  const msg = ctx.message;
  const ap = msg.application_properties || {};
  if (addr === '$cbs') {
    const tok = String(msg.body);
    const ok = ap.operation === 'put-token' && tokenOK(tok);
    const skn = new URLSearchParams(tok.replace(/^SharedAccessSignature /, '')).get('skn') || '';
    if (ok && !ctx.connection.sbKeys.has(skn)) {
      ctx.connection.sbKeys.add(skn);
      stats.connections_by_key[skn] = (stats.connections_by_key[skn] || 0) + 1;
    }
    log({ ev: 'cbs', skn, ok });
    reply(msg, ok ? 202 : 401, ok ? 'Accepted' : 'Unauthorized: the SAS token is invalid');
    return;
  }
  if (addr.endsWith('/$management')) {
    reply(msg, 501, 'not implemented by sbpeer');
    return;
  }
  const rec = Object.assign(
    {
      address: addr,
      message_id: msg.message_id,
      correlation_id: msg.correlation_id,
      content_type: msg.content_type,
      subject: msg.subject,
      to: msg.to,
      reply_to: msg.reply_to,
      group_id: msg.group_id,
      reply_to_group_id: msg.reply_to_group_id,
      ttl: msg.ttl,
      durable: msg.durable,
      application_properties: ap,
      application_property_types: typesOf(ap),
      message_annotations: msg.message_annotations || {},
    },
    bodyOf(msg),
  );
  const k = addr.toLowerCase();
  if (!received.has(k)) received.set(k, []);
  received.get(k).push(rec);
  logSoon({ ev: 'send', addr, message_id: msg.message_id });
  const item = { message: msg, seq: ++seq, enqueued: new Date() };
  q(addr).push(item);
  for (const subAddr of subs.get(k) || []) q(subAddr).push(Object.assign({}, item, { seq: ++seq }));
  pump(addr);
  for (const subAddr of subs.get(k) || []) pump(subAddr);
});

// sig = base64(HMAC-SHA256(utf8 key, <sr as sent, URL-encoded> + "\n" + se))
function tokenOK(tok) {
  if (!keys.size) return true;
  const p = new URLSearchParams(tok.replace(/^SharedAccessSignature /, ''));
  const key = keys.get(p.get('skn'));
  if (key === undefined) return false;
  const sr = (tok.match(/[ &]sr=([^&]*)/) || [])[1];
  const want = crypto.createHmac('sha256', key).update(sr + '\n' + p.get('se')).digest('base64');
  return want === p.get('sig') && Number(p.get('se')) * 1000 > Date.now();
}
function reply(req, code, desc) {
  const link = replyLinks.get(req.reply_to);
  if (!link) return;
  link.send({
    correlation_id: req.message_id,
    // status-code must be an AMQP int (int32): azservicebus rejects uint.
    application_properties: { 'status-code': rhea.types.wrap_int(code), 'status-description': desc },
  });
}

const amqpServer = container.listen({ port, host, tcp_no_delay: true }); // no Nagle: ~43 ms per round trip otherwise

const api = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  const send = (code, obj) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(obj));
  };
  let data = '';
  req.on('data', (c) => (data += c));
  req.on('end', () => {
    if (req.method === 'GET' && u.pathname === '/messages') {
      return send(200, received.get((u.searchParams.get('address') || '').toLowerCase()) || []);
    }
    if (req.method === 'GET' && u.pathname === '/stats') {
      const cpu = process.cpuUsage();
      return send(200, Object.assign({ connections_open: openConnections, cpu_us: cpu.user + cpu.system }, stats));
    }
    if (req.method === 'POST' && u.pathname === '/keys') {
      try {
        const { name, key } = JSON.parse(data);
        if (!name || typeof key !== 'string') return send(400, { error: 'want {"name":..,"key":..}' });
        keys.set(name, key);
        return send(200, {});
      } catch (e) {
        return send(400, { error: String(e.message) });
      }
    }
    if (req.method === 'POST' && u.pathname === '/reset') {
      received.clear();
      store.clear();
      stats = newStats();
      return send(200, {});
    }
    send(404, { error: 'no such endpoint' });
  });
});

let ready = 0;
function listening() {
  if (++ready < 2) return;
  log({ ev: 'listening', host, port: amqpServer.address().port, http: api.address().port, pid: process.pid });
}
amqpServer.on('listening', listening);
api.listen(httpPort, host, listening);
function exit() {
  flushLog();
  process.exit(0);
}
process.on('SIGTERM', exit);
process.on('SIGINT', exit);
