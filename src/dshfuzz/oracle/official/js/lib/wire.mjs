// The DeepSeek request serialisation, offline. serializeRequest is private to
// dsh-llm-deepseek, so the public DeepSeekAdapter.stream runs against a stubbed
// global fetch that captures the POST body and answers a canned SSE stream.
// Importing this module replaces globalThis.fetch for the whole process: any
// fetch outside a wire() call is refused, so the oracle can never reach a network.
import { DeepSeekAdapter, resolveAdapterOptions } from '@deepseek-ai/dsh-llm-deepseek';
import { Session, foldRequestHeader } from '@deepseek-ai/dsh-session';

const CANNED_SSE = [
  'data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}',
  'data: [DONE]',
  '',
].join('\n\n');

let capture;
globalThis.fetch = async (_url, init) => {
  if (capture === undefined) throw new Error('the oracle has no network: fetch outside a wire request');
  capture.body = JSON.parse(init.body);
  const bytes = new TextEncoder().encode(CANNED_SSE);
  return new Response(new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } }), {
    status: 200, headers: { 'content-type': 'text/event-stream' },
  });
};

const adapter = new DeepSeekAdapter({
  options: () => resolveAdapterOptions({}, undefined),
  resolveApiKey: async () => 'sk-offline',
  resolveUserId: () => 'oracle-user',
});

/**
 * The request body the adapter would POST for the surface at the end of the log:
 * Session.create + deriveMessages for the messages, the folded request/header
 * for model, system prompt and tools. A log without any request/header has no
 * request to serialise: `body` is null (not a refusal). Throws the adapter's LlmError (e.g.
 * UNSUPPORTED_CONTENT, a bad reasoning effort) or the session's refusal.
 */
export async function wire(events) {
  const session = Session.create('wire', events);
  const header = foldRequestHeader(events);
  if (header === undefined) return { body: null, chunks: 0 };
  const options = { ...header.config, messages: session.deriveMessages(), system: header.system, tools: header.tools, sessionId: 'wire' };
  capture = {};
  try {
    const chunks = [];
    for await (const chunk of adapter.stream(options)) chunks.push(chunk);
    return { body: capture.body, chunks: chunks.length };
  } finally {
    capture = undefined;
  }
}
