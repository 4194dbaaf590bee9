// One cold official load of one log file, as a whole process: the bridge's `load`
// layer (JsonlSessionPersistence.readPrefix + PersistenceCoordinator.prepareCore +
// Session.fromRestore), imported by absolute file URL so the script runs from any cwd.
//   node benchmarks/checker_official_load.mjs <path>
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { load } = await import(pathToFileURL(`${here}/../src/dshfuzz/oracle/official/js/lib/persistence.mjs`));
const summary = await load(resolve(process.argv[2]));
console.log(JSON.stringify({ events: summary.events }));
