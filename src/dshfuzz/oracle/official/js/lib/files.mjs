// Reading a log file the way the official backend does, without ever writing it.
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { JsonlSessionPersistence } from '@deepseek-ai/dsh-session-persistence-jsonl';
import { ProtocolError } from './errors.mjs';

const PROTO = JsonlSessionPersistence.prototype;

/** The request's file path, made absolute: the scratch-root symlink of loadApp needs an absolute target. */
export function filePath(path) {
  if (typeof path !== 'string' || path.length === 0) throw new ProtocolError('request needs a non-empty "path"');
  return isAbsolute(path) ? path : resolve(path);
}

/** The official writer names zstd logs `*.jsonl.zstd`; every other file is plain JSONL. */
export const compressionOf = (path) => (path.endsWith('.zstd') ? 'zstd' : 'none');

/** The first line through the official header readers (zstd: the first frame, checksum-verified). */
export async function readHeaderLine(path, compression = compressionOf(path)) {
  return compression === 'zstd' ? PROTO.readFirstZstdLine.call({}, path) : PROTO.readFirstLine.call({}, path);
}

/** The header's id when the first line is JSON with a string id, else undefined (the readers complain later). */
export async function headerIdOf(path, compression) {
  let line;
  try { line = await readHeaderLine(path, compression); } catch { return undefined; }
  try {
    const id = JSON.parse(line ?? 'null')?.id;
    return typeof id === 'string' && id.length > 0 ? id : undefined;
  } catch { return undefined; }
}

/**
 * Header value, storage rows and torn flag of a file, undecoded.
 *
 * zstd: the official `readRaw` (frame scan + checksummed per-frame decode; an
 * incomplete final frame is omitted); it refuses a header that is not an official
 * header line. Plain JSONL: the file's text, exactly what `readRaw` returns for
 * `compression: 'none'`, but without the header check so event layers can still
 * judge logs whose header only the persistence layer refuses.
 * A final line without '\n' is the torn tail and is not a row (SessionLogScanner.finish).
 */
export async function readRaw(path) {
  const compression = compressionOf(path);
  let text;
  if (compression === 'zstd') {
    const id = await headerIdOf(path, compression);
    const backend = Object.create(PROTO);
    backend.compression = 'zstd';
    backend.ensureRootEncoding = async () => {};
    backend.findLog = async () => path;
    text = (await backend.readRaw(id ?? '')).content;
  } else {
    text = readFileSync(path, 'utf8');
  }
  const lines = text.split('\n');
  const tail = lines.pop();
  const torn = tail !== '';
  if (lines.length === 0) throw new Error('log has no complete header line');
  const values = lines.map((line, index) => {
    try { return JSON.parse(line); } catch (e) {
      throw new Error(`physical line ${index + 1} is not JSON: ${e.message}`, { cause: e });
    }
  });
  const [header, ...rows] = values;
  return { compression, header, rows, torn };
}
