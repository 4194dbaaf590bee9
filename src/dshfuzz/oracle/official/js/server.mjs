#!/usr/bin/env node
// Long-lived JSON-lines server over the OFFICIAL DSH packages (Node >= 24 for zstd).
//
//   node server.mjs [--scratch=DIR] [--coverage[=function|block]] [--debug-ops]        (cwd: this directory)
//
// stdin : one request per line  {"id", "op", "events"?, "rows"?, "header"?, "path"?, "options"?}
// stdout: one reply per line, strictly in request order:
//         {"id", "ok": true, "result", "ms"}  |  {"id", "ok": false, "error": {"name","message","class"?,"code"?,"location"?,"cause"?}, "ms"}
//         The first line, before any reply, is {"ready": true, "pid"} once the packages are loaded.
// stderr: diagnostics only; anything the libraries print is redirected there.
//
// ops: ping version fold seed invariants meter inbox wire closers pack unpack
//      load loadApp released readRaw all sites coverage   (+ __crash __hang with --debug-ops)
// With --coverage every reply also carries "coverage": {"sites": [ids], "code": n}, the official
// refusal sites and code units (functions, or blocks) it reached first on this server (lib/coverage.mjs),
// unless the request says "coverage": "defer" (then the next reply reports both requests');
// op "coverage" returns the whole site table with what this server reached. Op "sites" returns
// the site table (no coverage needed).
// Event ops take "events" (or "rows", or a file "path" decoded with the official
// readRaw + decodeStorageRecord); load/loadApp/readRaw take "path"; released takes
// "path" or "header" + "rows"/"events". Inputs are frozen; files are only read.
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';

const reply = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.error;
console.info = console.error;
console.debug = console.error;

// Coverage starts before the packages load: their throws are instrumented as they load, and V8 counts their code.
const coverageArg = process.argv.find((arg) => arg === '--coverage' || arg.startsWith('--coverage='));
const { OfficialCoverage, siteTable } = await import('./lib/coverage.mjs');
const coverage = coverageArg === undefined ? undefined
  : await OfficialCoverage.start(coverageArg.includes('=') ? coverageArg.slice('--coverage='.length) : 'function');

// Imported only now, so that nothing a package prints while loading reaches the protocol channel.
const { SESSION_FORMAT_VERSION, packChunkRuns } = await import('@deepseek-ai/dsh-session');
const { errorJson, ProtocolError } = await import('./lib/errors.mjs');
const { deepFreeze } = await import('./lib/freeze.mjs');
const { filePath, readRaw } = await import('./lib/files.mjs');
const S = await import('./lib/session.mjs');
const { load, loadApp, removeScratch, useScratch } = await import('./lib/persistence.mjs');
const { meter, inbox } = await import('./lib/meter.mjs');
const { released } = await import('./lib/released.mjs');
const { wire } = await import('./lib/wire.mjs');
const { allLayers, LAYER_NAMES } = await import('./lib/layers.mjs');

const scratchArg = process.argv.find((arg) => arg.startsWith('--scratch='));
if (scratchArg !== undefined) useScratch(scratchArg.slice('--scratch='.length));
process.on('exit', removeScratch);
process.on('unhandledRejection', (e) => console.error('[oracle] unhandled rejection:', e));
process.on('uncaughtException', (e) => {
  console.error('[oracle] uncaught exception, exiting:', e);
  process.exit(70);
});

const require = createRequire(import.meta.url);
const PACKAGES = ['cordis', 'dsh-session', 'dsh-session-persistence', 'dsh-session-persistence-jsonl', 'dsh-token-meter',
  'dsh-agent', 'dsh-llm', 'dsh-llm-deepseek', 'dsh-invariants', 'dsh-session-format', 'dsh-session-format-v0-to-v1'];
const versions = Object.fromEntries(PACKAGES.map((p) => [p, require(`@deepseek-ai/${p}/package.json`).version]));

/** The log a request names: inline events, storage rows, or a file. */
async function logOf(req) {
  if (req.events !== undefined) {
    if (!Array.isArray(req.events)) throw new ProtocolError('"events" must be an array');
    return { header: req.header, events: req.events };
  }
  if (req.rows !== undefined) return { header: req.header, events: deepFreeze(S.unpack(rowsOf(req))) };
  if (req.path !== undefined) {
    const { header, rows } = await readRaw(filePath(req.path));
    return deepFreeze({ header, events: S.unpack(rows) });
  }
  throw new ProtocolError('request needs "events", "rows" or "path"');
}
function rowsOf(req) {
  if (!Array.isArray(req.rows)) throw new ProtocolError('"rows" must be an array');
  return req.rows;
}
const opts = (req) => req.options ?? {};

const handlers = {
  ping: async () => 'pong',
  sites: async () => siteTable(),
  coverage: async () => {
    if (coverage === undefined) throw new ProtocolError('coverage needs the server started with --coverage');
    return coverage.table();
  },
  version: async () => ({ node: process.version, sessionFormatVersion: SESSION_FORMAT_VERSION, packages: versions, layers: LAYER_NAMES }),
  fold: async (req) => S.fold((await logOf(req)).events),
  seed: async (req) => { const { header, events } = await logOf(req); return S.seed(events, { header, restore: opts(req).restore === true }); },
  invariants: async (req) => { const { header, events } = await logOf(req); return S.invariants(events, { header }); },
  meter: async (req) => meter((await logOf(req)).events),
  inbox: async (req) => { const { header, events } = await logOf(req); return inbox(events, { header, seedLength: opts(req).seedLength }); },
  wire: async (req) => wire((await logOf(req)).events),
  closers: async (req) => S.closers((await logOf(req)).events),
  pack: async (req) => S.pack((await logOf(req)).events),
  unpack: async (req) => S.unpack(rowsOf(req)),
  load: async (req) => load(filePath(req.path)),
  loadApp: async (req) => loadApp(filePath(req.path)),
  readRaw: async (req) => readRaw(filePath(req.path)),
  released: async (req) => {
    if (req.path !== undefined) { const { header, rows } = await readRaw(filePath(req.path)); return released(header, rows); }
    if (req.header === undefined) throw new ProtocolError('released needs "path", or "header" with "rows" or "events"');
    return released(req.header, req.rows !== undefined ? rowsOf(req) : packChunkRuns((await logOf(req)).events));
  },
  all: async (req) => {
    const only = opts(req).layers;
    if (only !== undefined && !(Array.isArray(only) && only.every((n) => LAYER_NAMES.includes(n)))) {
      throw new ProtocolError(`options.layers must be a subset of ${LAYER_NAMES.join(', ')}`);
    }
    if (req.path !== undefined) return allLayers({ path: filePath(req.path) }, only);
    if (!Array.isArray(req.events)) throw new ProtocolError('all needs "events" or "path"');
    return allLayers({ events: req.events, header: req.header }, only);
  },
};

const debugHandlers = {
  __crash: async () => process.kill(process.pid, 'SIGKILL'),
  __hang: async () => { for (;;) { /* a wedged official call: only a kill ends it */ } },
};
if (process.argv.includes('--debug-ops')) Object.assign(handlers, debugHandlers);

async function handle(line) {
  const t0 = performance.now();
  let req;
  let out;
  try { req = JSON.parse(line); } catch (e) {
    out = { id: null, ok: false, error: errorJson(new ProtocolError(`request is not JSON: ${e.message}`)) };
  }
  out ??= await dispatch(req);
  // taken after every request but one that defers it to the next: a take costs what a small log does
  if (coverage !== undefined && req?.coverage !== 'defer') out.coverage = await coverage.take();
  out.ms = +(performance.now() - t0).toFixed(3);
  return out;
}

async function dispatch(req) {
  const id = req?.id ?? null;
  const handler = Object.hasOwn(handlers, req?.op) ? handlers[req.op] : undefined;
  if (handler === undefined) return { id, ok: false, error: errorJson(new ProtocolError(`unknown op ${JSON.stringify(req?.op)}`)) };
  deepFreeze(req);
  try { return { id, ok: true, result: await handler(req) }; } catch (e) { return { id, ok: false, error: errorJson(e) }; }
}

function serialise(out) {
  try { return JSON.stringify(out); } catch (e) {
    return JSON.stringify({ id: out.id, ok: false, error: errorJson(new ProtocolError(`result is not serialisable: ${e.message}`)), ms: out.ms });
  }
}

// what loading the packages ran is nobody's reach: zero the counters before the first request
if (coverage !== undefined) await coverage.take();
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
let chain = Promise.resolve();
rl.on('line', (line) => {
  if (line.trim() === '') return;
  chain = chain.then(async () => { reply(serialise(await handle(line)) + '\n'); });
});
rl.on('close', () => { chain.then(() => process.exit(0)); });
reply(JSON.stringify({ ready: true, pid: process.pid }) + '\n');
