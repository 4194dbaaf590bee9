// dsh-token-meter and dsh-agent's Inbox, replayed offline over an event list.
import { Context } from '@deepseek-ai/cordis';
import { SessionProjectionRegistry } from '@deepseek-ai/dsh-session-projection';
import { TokenMeter } from '@deepseek-ai/dsh-token-meter';
import { Inbox } from '@deepseek-ai/dsh-agent';

let meterContext;
async function meterApp() {
  if (meterContext === undefined) {
    const ctx = new Context();
    await ctx.plugin(SessionProjectionRegistry);
    await ctx.plugin(TokenMeter, {});
    meterContext = ctx;
  }
  return meterContext;
}

/**
 * TokenMeter.measure (TM:444) plus the three projection units (TM:156/241/293).
 * Both read only `session.events` and `session.seq`, so a plain view suffices.
 */
export async function meter(events) {
  const ctx = await meterApp();
  const session = { id: 'meter', events, get seq() { return events.length; } };
  const measured = ctx.tokenMeter.measure(session);
  const snapshot = ctx.sessionProjections.snapshot(session);
  return { measure: { ...measured, nodes: measured.nodes.length }, projections: snapshot.values };
}

const SILENT = Object.freeze({ inserted() {}, discarded() {}, claimed() {} });

/**
 * new Inbox(session) (AG:12-29) replays every agent/inbox/spliced at or after
 * the header's seedLength; `seedLength` overrides the header's value.
 */
export function inbox(events, { header, seedLength } = {}) {
  const cut = seedLength ?? (header && typeof header === 'object' ? header.seedLength : undefined);
  const replayed = new Inbox({ events, header: cut === undefined ? {} : { seedLength: cut } }, SILENT);
  return { nextTurn: replayed.nextTurn.map((m) => m?.id ?? null), nextStep: replayed.nextStep.map((m) => m?.id ?? null) };
}
