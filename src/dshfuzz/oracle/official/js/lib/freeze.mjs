// Inputs are frozen before any official code sees them: a layer that tried to
// mutate its input would throw instead of silently changing what the next layer
// of the same request judges.

/** Recursively freeze a JSON value in place and return it. */
export function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
