// The persistence read path, strictly read-only: the official backend's load()
// commits crash repairs into the file, so only readPrefix (no app) and
// inspect() (in an app, on a symlink) are ever used.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { Context } from '@deepseek-ai/cordis';
import { Session, SessionStore } from '@deepseek-ai/dsh-session';
import { JsonlSessionPersistence } from '@deepseek-ai/dsh-session-persistence-jsonl';
import { PersistenceCoordinator } from '@deepseek-ai/dsh-session-persistence';
import { compressionOf, headerIdOf, readHeaderLine } from './files.mjs';
import { registerScratchRoot } from './errors.mjs';

function summarise(inspection, closers, tornMarker, sessionLength) {
  return {
    meta: inspection.meta,
    events: inspection.events.length,
    storedEvents: inspection.events.length - closers.length,
    closers: closers.map((e) => ({ type: e.type, seq: e.seq, ...(e.data?.reason ? { reason: e.data.reason.kind } : {}) })),
    torn: tornMarker === undefined ? null : { truncateTo: tornMarker.truncateTo, recoveredEvents: tornMarker.recoveredEvents.length },
    sessionLength,
  };
}

/**
 * "loadDirect": the official code without a Cordis app, by prototype borrowing.
 * JsonlSessionPersistence.prototype.readPrefix (bytes, zstd frames, seq gaps,
 * torn tails) feeds PersistenceCoordinator.prototype.prepareCore (format version,
 * legacy upgrades, adoption, known/ignorable types, closers, Session.fromRestore).
 * Only assertStoredIdentity is stubbed: it checks the <root>/<project>/<id>
 * placement, which a loose file cannot have.
 */
export async function load(path) {
  const compression = compressionOf(path);
  const backend = Object.create(JsonlSessionPersistence.prototype);
  backend.compression = compression;
  backend.root = dirname(path);
  backend.assertStoredIdentity = async () => {};
  const coordinator = Object.create(PersistenceCoordinator.prototype);
  coordinator.backend = { name: 'direct', loadStored: () => backend.readPrefix(path), locate: () => ({ kind: 'jsonl', path }) };
  coordinator.ctx = { sessions: { prepare: (id, options) => Session.fromRestore(id, options.seed, options.meta) } };
  const source = await coordinator.prepareCore((await headerIdOf(path, compression)) ?? 'unknown');
  return summarise(source.inspection, source.closers, source.tornMarker, source.sessionLength);
}

const apps = new Map();
let scratchParent;

/**
 * Use `dir` for the persistence apps' scratch roots. The Python client passes a
 * directory it created, so it can remove it even after killing the server;
 * without one, a private temporary directory is made on first use.
 */
export function useScratch(dir) {
  scratchParent = dir;
}

/** Remove every scratch root; called once when the server exits. */
export function removeScratch() {
  if (scratchParent !== undefined) rmSync(scratchParent, { recursive: true, force: true });
}

async function persistenceApp(compression) {
  if (!apps.has(compression)) {
    scratchParent ??= mkdtempSync(join(tmpdir(), 'dshfuzz-oracle-'));
    mkdirSync(scratchParent, { recursive: true });
    registerScratchRoot(scratchParent);
    const root = join(scratchParent, compression);
    mkdirSync(root);
    const ctx = new Context();
    await ctx.plugin(SessionStore);
    await ctx.plugin(JsonlSessionPersistence, { root, compression });
    apps.set(compression, { ctx, root });
  }
  return apps.get(compression);
}

/**
 * "loadApp": a real Cordis app (SessionStore + JsonlSessionPersistence over a
 * scratch root). The file is symlinked to persistence.locate(meta).path and
 * inspect(id) is called; the symlink's project directory is removed afterwards
 * and the coordinator's cache entry invalidated, so requests stay independent.
 */
export async function loadApp(path) {
  const compression = compressionOf(path);
  const { ctx, root } = await persistenceApp(compression);
  const persistence = ctx.sessionPersistence;
  let header = {};
  try {
    header = JSON.parse((await readHeaderLine(path, compression)) ?? '{}') ?? {};
  } catch { /* inspect() below reports the broken header */ }
  const id = typeof header.id === 'string' && header.id.length > 0 ? header.id : 'unknown-id';
  const cwd = typeof header.cwd === 'string' ? header.cwd : undefined;
  const target = persistence.locate({ id, cwd }).path;
  if (!target.startsWith(root + sep)) throw new Error(`persistence located session "${id}" outside its scratch root`);
  const projectDir = join(root, relative(root, target).split(sep)[0]);
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(path, target);
  try {
    const inspected = await persistence.inspect(id);
    return { meta: inspected.meta, events: inspected.events.length, lastType: inspected.events.at(-1)?.type ?? null };
  } finally {
    persistence.coordinator.preparations.invalidate(id);
    rmSync(projectDir, { recursive: true, force: true });
  }
}
