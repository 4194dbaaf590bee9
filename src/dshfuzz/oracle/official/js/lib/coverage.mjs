// Official coverage: which refusal sites (`throw` statements) and how much code of the official
// packages a judged log reached first on this server.
//
// Refusal sites are exact and cost nothing until a site throws: a module hook rewrites each
// `throw X` of COVERED_PACKAGES' entry modules, as they load, into `throw reach(n, X)`, where
// `reach` records site n and returns X unchanged (so every verdict stays the packages' own;
// tests/conformance/test_official_reach.py compares verdicts with coverage on and off).
// Code reached is V8 precise coverage through node:inspector, in process: by function (the
// default: V8's binary function coverage costs next to nothing) or by block (V8 block coverage,
// which slows the official code by about a third).
//
// Invariants:
// - a site's id is `package/file:line:column` (1-based line, 0-based column) in the
//   installed source, so a site that moves between package versions changes id;
// - the hook and V8 coverage start before the packages are imported (`OfficialCoverage.start`);
// - each `take` reports what ran since the previous take, and what ran first on this server.
import inspector from 'node:inspector/promises';
import { readFileSync } from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import { pathToFileURL } from 'node:url';
import * as acorn from 'acorn';

/** The packages a log passes through on its way to a verdict (the refusal map's scope). */
export const COVERED_PACKAGES = Object.freeze([
  'dsh-session', 'dsh-session-format', 'dsh-session-format-v0-to-v1', 'dsh-session-persistence',
  'dsh-session-persistence-jsonl', 'dsh-token-meter', 'dsh-invariants',
]);
export const GRANULARITIES = Object.freeze(['function', 'block']);

const require = createRequire(import.meta.url);
const MESSAGE_CHARS = 200;
const REACH = Symbol.for('dshfuzz.officialReach');

function walk(node, visit) {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) { for (const child of node) walk(child, visit); return; }
  if (typeof node.type !== 'string') return;
  visit(node);
  for (const key of Object.keys(node)) {
    if (key !== 'type' && key !== 'start' && key !== 'end' && key !== 'loc') walk(node[key], visit);
  }
}

/** The message template of `throw new X(template, …)` or `throw make(meta, template)`: the
 * first text argument's source, else the first argument's, else the whole expression's. */
function messageOf(source, argument) {
  let node = argument;
  if ((node.type === 'NewExpression' || node.type === 'CallExpression') && node.arguments.length > 0) {
    const text = (a) => a.type === 'TemplateLiteral' || (a.type === 'Literal' && typeof a.value === 'string');
    node = node.arguments.find(text) ?? node.arguments[0];
  }
  const text = source.slice(node.start, node.end).replace(/\s+/g, ' ');
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS - 1)}…` : text;
}

/** Every `throw` statement of one module, in source order: id, place, message template, argument span. */
function sitesOf(pkg, file, source) {
  const program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true, allowHashBang: true });
  const sites = [];
  walk(program, (node) => {
    if (node.type !== 'ThrowStatement') return;
    const { line, column } = node.loc.start;
    sites.push({
      id: `${pkg}/${file}:${line}:${column}`, package: pkg, file, line, column,
      message: messageOf(source, node.argument), argStart: node.argument.start, argEnd: node.argument.end,
    });
  });
  return sites.sort((a, b) => a.argStart - b.argStart);
}

/** The refusal-site table: every covered package's entry module, its version, source and sites. */
export function refusalSites() {
  const modules = [];
  for (const pkg of COVERED_PACKAGES) {
    const path = require.resolve(`@deepseek-ai/${pkg}`);
    const version = require(`@deepseek-ai/${pkg}/package.json`).version;
    const file = path.slice(path.lastIndexOf(`${pkg}/`) + pkg.length + 1);
    const source = readFileSync(path, 'utf8');
    modules.push({ package: pkg, version, file, url: pathToFileURL(path).href, source, sites: sitesOf(pkg, file, source) });
  }
  return modules;
}

/** `source` with each site's thrown value passed through `reach(index, …)` (indexes from `first`). */
function instrumented(source, sites, first) {
  let out = '';
  let at = 0;
  sites.forEach((site, i) => {
    if (site.argStart < at) throw new Error(`cannot instrument ${site.id}: a throw inside another throw's argument`);
    out += `${source.slice(at, site.argStart)}globalThis[Symbol.for('dshfuzz.officialReach')](${first + i}, `;
    out += `${source.slice(site.argStart, site.argEnd)})`;
    at = site.argEnd;
  });
  return out + source.slice(at);
}

/** Refusal sites reached, and official code reached through V8 coverage, request by request. */
export class OfficialCoverage {
  #session;
  #granularity;
  #modules;
  #sites;
  #urls;
  #thrown = new Set();
  #reachedSites = new Set();
  #reachedCode = new Set();

  constructor(session, modules, granularity) {
    this.#session = session;
    this.#granularity = granularity;
    this.#modules = modules;
    this.#sites = modules.flatMap((m) => m.sites);
    this.#urls = new Map(modules.map((m, index) => [m.url, index]));
  }

  /** Instrument the covered packages and start V8 coverage; call before they are imported. */
  static async start(granularity = 'function') {
    if (!GRANULARITIES.includes(granularity)) throw new Error(`coverage granularity must be one of ${GRANULARITIES.join(', ')}`);
    const modules = refusalSites();
    const session = new inspector.Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: false, detailed: granularity === 'block' });
    const coverage = new OfficialCoverage(session, modules, granularity);
    const thrown = coverage.#thrown;
    globalThis[REACH] = (index, value) => { thrown.add(index); return value; };
    const firsts = new Map();
    let first = 0;
    for (const m of modules) { firsts.set(m.url, first); first += m.sites.length; }
    registerHooks({
      load(url, context, nextLoad) {
        const loaded = nextLoad(url, context);
        const m = modules[coverage.#urls.get(url)];
        if (m === undefined) return loaded;
        return { ...loaded, source: instrumented(m.source, m.sites, firsts.get(url)) };
      },
    });
    return coverage;
  }

  /** What ran since the last take, reached first here: refusal site ids and a count of code units. */
  async take() {
    const sites = [];
    for (const index of this.#thrown) {
      const { id } = this.#sites[index];
      if (!this.#reachedSites.has(id)) { this.#reachedSites.add(id); sites.push(id); }
    }
    this.#thrown.clear();
    const { result } = await this.#session.post('Profiler.takePreciseCoverage');
    let code = 0;
    for (const script of result) {
      const index = this.#urls.get(script.url);
      if (index === undefined) continue;
      for (const fn of script.functions) {
        // binary coverage: a function's first range is the function, its count 1 once it ran
        const ranges = this.#granularity === 'block' ? fn.ranges : fn.ranges.slice(0, 1);
        for (const r of ranges) {
          if (r.count === 0) continue;
          const key = `${index}:${r.startOffset}:${r.endOffset}`;
          if (!this.#reachedCode.has(key)) { this.#reachedCode.add(key); code += 1; }
        }
      }
    }
    return { sites, code };
  }

  /** The whole table: every site with whether this server reached it, and the code reached. */
  table() {
    return {
      granularity: this.#granularity,
      packages: this.#modules.map((m) => ({ package: m.package, version: m.version, file: m.file, sites: m.sites.length })),
      sites: this.#sites.map(({ id, package: pkg, file, line, column, message }) => (
        { id, package: pkg, file, line, column, message, reached: this.#reachedSites.has(id) })),
      code: this.#reachedCode.size,
    };
  }
}

/** The site table as the `sites` op gives it (no source, no offsets). */
export function siteTable() {
  return refusalSites().map(({ package: pkg, version, file, sites }) => (
    { package: pkg, version, file, sites: sites.map(({ id, line, column, message }) => ({ id, line, column, message })) }));
}
