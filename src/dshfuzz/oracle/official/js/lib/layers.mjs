// The layer table: which official code path judges what, and `all`, which runs
// every applicable layer on one log and reports each verdict independently.
import { packChunkRuns } from '@deepseek-ai/dsh-session';
import { errorJson } from './errors.mjs';
import { deepFreeze } from './freeze.mjs';
import { readRaw } from './files.mjs';
import { fold, seed, invariants, unpack } from './session.mjs';
import { load, loadApp } from './persistence.mjs';
import { meter, inbox } from './meter.mjs';
import { released } from './released.mjs';
import { wire } from './wire.mjs';

/** Layers judging an event list (the events as stored: no legacy upgrade). */
export const EVENT_LAYERS = Object.freeze({
  fold: ({ events }) => fold(events),
  seed: ({ events, header }) => seed(events, { header }),
  invariants: ({ events, header }) => invariants(events, { header }),
  meter: ({ events }) => meter(events),
  inbox: ({ events, header }) => inbox(events, { header }),
  wire: ({ events }) => wire(events),
});

/** Layers judging a file's bytes (they upgrade legacy shapes on read). */
export const FILE_LAYERS = Object.freeze({
  load: ({ path }) => load(path),
  loadApp: ({ path }) => loadApp(path),
  released: async ({ path }) => { const { header, rows } = await readRaw(path); return released(header, rows); },
});

/** `released` for an inline log: the rows the official writer would store. */
const releasedInline = ({ header, events }) => released(header, packChunkRuns(events));

export const LAYER_NAMES = Object.freeze(['fold', 'seed', 'invariants', 'load', 'loadApp', 'meter', 'inbox', 'released', 'wire']);

async function verdict(fn, input) {
  try { return { ok: true, result: await fn(input) }; } catch (e) { return { ok: false, error: errorJson(e) }; }
}

/**
 * Run the requested layers (default: all applicable) on one log.
 * Inline: event layers, plus `released` when a header is given. By path: the
 * file layers on the file and the event layers on its rows decoded with the
 * official decodeStorageRecord; when the file cannot be decoded, the file layers
 * are still reported and `decodeError` says why the event layers could not run.
 */
export async function allLayers({ events, header, path }, only) {
  const wanted = (name) => only === undefined || only.includes(name);
  const layers = {};
  let decodeError;
  let input = { events, header, path };
  // released reads the file exactly as the event layers do: one read serves both (a zstd bomb inflates once, not twice)
  let rawRead;
  if (path !== undefined) {
    rawRead = readRaw(path).then((raw) => ({ raw }), (error) => ({ error }));
    const { raw, error } = await rawRead;
    try {
      if (error !== undefined) throw error;
      input = deepFreeze({ path, header: raw.header, events: unpack(raw.rows) });
    } catch (e) {
      decodeError = errorJson(e);
      input = { path };
    }
  }
  const releasedOnRead = async () => {
    const { raw, error } = await rawRead;
    if (error !== undefined) throw error;
    // an unfrozen copy, as released's own read would give it (the event layers' input is frozen)
    let copy;
    try { copy = structuredClone(raw); } catch { return FILE_LAYERS.released({ path }); } // too deep to clone: read again
    return released(copy.header, copy.rows);
  };
  for (const name of LAYER_NAMES) {
    if (!wanted(name)) continue;
    let fn;
    if (path !== undefined && name === 'released') fn = releasedOnRead;
    else if (path !== undefined && name in FILE_LAYERS) fn = FILE_LAYERS[name];
    else if (name in EVENT_LAYERS && input.events !== undefined) fn = EVENT_LAYERS[name];
    else if (name === 'released' && path === undefined && header !== undefined) fn = releasedInline;
    if (fn !== undefined) layers[name] = await verdict(fn, input);
  }
  return decodeError === undefined ? { layers } : { layers, decodeError };
}
