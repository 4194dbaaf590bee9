// Times the official persistence read of one log file in this Node process.
//   node benchmarks/official_load.mjs <abs path> <repeats>
// Prints one JSON line: {"readPrefixMs":[...], "loadMs":[...], "events":n}.
// readPrefix is the official byte layer (frames, rows, scanner: what dshfuzz's
// read_log models); load adds prepareCore + Session.fromRestore (the bridge's
// `load` layer). Both run through the bridge's own wrapper module.
import { performance } from 'node:perf_hooks';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const js = `${here}/../src/dshfuzz/oracle/official/js`;
const { load } = await import(pathToFileURL(`${js}/lib/persistence.mjs`));
const { JsonlSessionPersistence } = await import(
  pathToFileURL(`${js}/node_modules/@deepseek-ai/dsh-session-persistence-jsonl/lib/index.js`)
);

const [path, repeatsArg] = process.argv.slice(2);
const repeats = Number(repeatsArg ?? 5);
const backend = Object.create(JsonlSessionPersistence.prototype);
backend.compression = path.endsWith('.zstd') ? 'zstd' : 'none';
backend.assertStoredIdentity = async () => {};

const readPrefixMs = [];
const loadMs = [];
let events = 0;
for (let i = 0; i < repeats; i++) {
  let t = performance.now();
  const prefix = await backend.readPrefix(path);
  readPrefixMs.push(performance.now() - t);
  t = performance.now();
  const summary = await load(path);
  loadMs.push(performance.now() - t);
  events = summary.events;
  if (prefix.events.length !== summary.storedEvents) throw new Error('readPrefix and load disagree');
}
console.log(JSON.stringify({ readPrefixMs, loadMs, events }));
