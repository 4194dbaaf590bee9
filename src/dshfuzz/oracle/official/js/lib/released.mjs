// The released-format catalog: the strictest official statement of format v0,
// and the only official reader of format v1.
import { KNOWN_SESSION_EVENT_TYPES } from '@deepseek-ai/dsh-session';
import * as V0 from '@deepseek-ai/dsh-session-format-v0-to-v1';
import * as SF from '@deepseek-ai/dsh-session-format';

/** Restoring a current (v1) artifact: coordinates against rc.8's vocabulary, then the relation checks. */
function restoreCurrent(artifact) {
  V0.restoreReleasedV1Artifact(artifact, KNOWN_SESSION_EVENT_TYPES);
  V0.assertReleasedArtifactRelationships(artifact);
  return artifact;
}

/**
 * A catalog with current version 1: codecs releasedV0/V1 (createReleasedCodec),
 * the v0->v1 migration (normalisation + exact per-type payloads), and
 * restoreReleasedV1Artifact + assertReleasedArtifactRelationships as the
 * current restore. The wiring of the unpublished dsh-session >= 0.1.3 is
 * reconstructed; every step is official code. `validation: 'current'` keeps
 * restore errors unwrapped.
 */
const catalog = SF.createSessionFormatCatalog({
  currentVersion: 1,
  migrations: [V0.sessionFormatV0ToV1],
  codecs: [V0.releasedV0SessionFormatCodec, V0.releasedV1SessionFormatCodec],
  restoreCurrentHeader: (header) => header,
  restoreCurrent,
  restoreTransformedCurrent: restoreCurrent,
  currentEncoder: {
    encodeHeader() { throw new Error('the oracle never writes a log'); },
    encodeEvent() { throw new Error('the oracle never writes a log'); },
  },
});

/**
 * Decode a physical header + rows through the catalog's strict restore.
 * A v0 header migrates to v1; a v1 header is restored as current; a newer
 * version is refused by the catalog itself.
 */
export function released(headerLine, rows) {
  if (!Array.isArray(rows)) throw new TypeError('released needs an array of storage rows');
  const restore = catalog.createRestore(headerLine, { recovery: 'strict', validation: 'current' });
  for (const row of rows) restore.decodeRow(row);
  const artifact = restore.finish();
  return { header: artifact.header, inheritedEventCount: artifact.inheritedEventCount, events: artifact.events.length };
}
