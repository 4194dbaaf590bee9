// The dsh-session layers: surface fold, detached seed, invariant companion,
// crash closers and the chunk-row codec. Each returns a JSON summary or throws
// the official error untouched.
import { Context } from '@deepseek-ai/cordis';
import {
  Session, SessionStore, foldSurface, packChunkRuns, decodeStorageRecord, interruptedTurnClosers,
} from '@deepseek-ai/dsh-session';
import * as SessionInvariant from '@deepseek-ai/dsh-session/invariant';
import { InvariantRegistry } from '@deepseek-ai/dsh-invariants';

/** A physical header line -> the SessionHeader the Session API takes (no `type`). */
export function sessionHeaderOf(headerLine, fallbackId) {
  if (headerLine === undefined || headerLine === null || typeof headerLine !== 'object') return undefined;
  const { type: _type, ...rest } = headerLine;
  return { ...rest, id: rest.id ?? fallbackId };
}

/** foldSurface (S:444): seq == index plus the surface plan. */
export function fold(events) {
  const { nodes, replacements } = foldSurface(events);
  return { nodes, replacements };
}

/**
 * Session.create (S:1359): envelope, message shapes, request/header, seq, surface
 * and header. `restore` selects Session.fromRestore, which freezes its input in
 * place, so it is handed clones.
 */
export function seed(events, { header, restore = false } = {}) {
  const id = 'oracle';
  const h = sessionHeaderOf(header, id);
  const session = restore
    ? Session.fromRestore(h?.id ?? id, structuredClone(events), structuredClone(h ?? { version: 0, id, createdAt: 0 }))
    : Session.create(h?.id ?? id, events, h);
  return {
    length: session.events.length,
    endSeedAppended: session.events.length === events.length + 1,
    firstLiveSeq: session.firstLiveSeq,
    surfaceNodes: session.surface.nodes.length,
    derivedMessages: session.deriveMessages().length,
    requestHeader: session.requestHeader() !== undefined,
  };
}

let invariantContext;
let invariantCounter = 0;
async function invariantApp() {
  if (invariantContext === undefined) {
    const ctx = new Context();
    await ctx.plugin(SessionStore);
    await ctx.plugin(InvariantRegistry, {});
    await ctx.plugin(SessionInvariant);
    invariantContext = ctx;
  }
  return invariantContext;
}

/**
 * The invariant companion (SI:20-102) runs on `session/created`, so the seed goes
 * through the store's prepare + enter + announce; detaching afterwards keeps the
 * long-lived store empty. Only cwd and createdAt of the header reach the store,
 * as in the harness (the store mints version and id itself).
 */
export async function invariants(events, { header } = {}) {
  const ctx = await invariantApp();
  const id = `invariants-${++invariantCounter}`;
  const meta = header && typeof header === 'object'
    ? { ...(header.cwd === undefined ? {} : { cwd: header.cwd }), ...(header.createdAt === undefined ? {} : { createdAt: header.createdAt }) }
    : undefined;
  const session = ctx.sessions.prepare(id, { seed: events, ...(meta ? { meta } : {}) });
  const detach = ctx.sessions.enter(session);
  try {
    ctx.sessions.announce(session);
    return { length: session.events.length };
  } finally {
    detach();
  }
}

/** interruptedTurnClosers: the synthetic events a crash repair would append. */
export const closers = (events) => interruptedTurnClosers(events);

/** packChunkRuns (S:828): events -> storage rows. */
export const pack = (events) => packChunkRuns(events);

/** decodeStorageRecord (S:1029) over every row: storage rows -> events. */
export const unpack = (rows) => rows.flatMap((row) => decodeStorageRecord(row));
