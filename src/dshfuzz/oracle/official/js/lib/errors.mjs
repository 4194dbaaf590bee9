// Official errors -> plain JSON, so the Python side can type them.
// Scratch paths (the persistence app's private roots) never leave the server:
// they differ between runs and would make equal verdicts compare unequal.

const scratchRoots = new Set();

/** Register a scratch root whose absolute path must be hidden in messages. */
export function registerScratchRoot(root) {
  scratchRoots.add(root);
}

function hideScratch(text) {
  let out = text;
  for (const root of scratchRoots) out = out.split(root).join('<scratch>');
  return out;
}

/**
 * Serialise any thrown value: name, constructor class (when it differs from the
 * name), code, location, a bounded cause chain and AggregateError members.
 */
export function errorJson(error, depth = 0) {
  if (!(error instanceof Error)) return { name: typeof error, message: hideScratch(String(error)) };
  const out = { name: error.name, message: hideScratch(error.message) };
  const cls = error.constructor?.name;
  if (cls && cls !== error.name) out.class = cls;
  if (error.code !== undefined) out.code = error.code;
  if (error.location !== undefined) out.location = JSON.parse(hideScratch(JSON.stringify(error.location)));
  if (error.cause !== undefined && depth < 4) out.cause = errorJson(error.cause, depth + 1);
  if (error instanceof AggregateError) out.errors = error.errors.map((e) => errorJson(e, depth + 1));
  return out;
}

/** An error in how a request was phrased (never an official verdict). */
export class ProtocolError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ProtocolError';
  }
}
