// Drives a strandslike AG-UI server with the official TypeScript client, @ag-ui/client.
//
//   node client.mjs <server url> [thread id] [bearer token]
//
// Sends a message, receives the interrupt outcome, checks that the client itself refuses to run on while the
// interrupt is unanswered, reloads the thread in a new client (which gets the pending interrupts back), resumes
// from that client with buildResumeArray, receives success, and prints a JSON summary on stdout.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const [url, threadId = "js-thread", token] = process.argv.slice(2);
if (!url) {
  console.error("usage: node client.mjs <server url> [thread id]");
  process.exit(2);
}

const headers = token ? { Authorization: `Bearer ${token}` } : {};
const agent = new HttpAgent({ url, threadId, headers });

async function run(parameters, client = agent) {
  const seen = { events: [], outcome: null, interrupts: [], toolCalls: [], toolResults: {}, text: "", error: null };
  const subscriber = {
    onEvent({ event }) {
      seen.events.push(event.type);
    },
    onRunFinishedEvent(params) {
      seen.outcome = params.outcome;
      if (params.outcome === "interrupt") seen.interrupts = params.interrupts;
    },
    onToolCallStartEvent({ event }) {
      seen.toolCalls.push(event.toolCallId);
    },
    onToolCallResultEvent({ event }) {
      seen.toolResults[event.toolCallId] = event.content;
    },
    onTextMessageContentEvent({ event }) {
      seen.text += event.delta;
    },
    onRunErrorEvent({ event }) {
      seen.error = { code: event.code, message: event.message };
    },
  };
  try {
    await client.runAgent(parameters, subscriber);
  } catch (error) {
    seen.error = seen.error ?? { message: String(error?.message ?? error) };
  }
  return seen;
}

agent.addMessage({ id: "js-user-1", role: "user", content: "Clean up the old files" });
const first = await run({ runId: "js-run-1" });
const pending = agent.pendingInterrupts.map((interrupt) => ({ ...interrupt }));

// The client refuses, by itself, to run on a thread whose interrupts are not all answered.
let clientRefusal = null;
try {
  await agent.runAgent({ runId: "js-run-refused" });
} catch (error) {
  clientRefusal = String(error?.message ?? error);
}

// A reloaded page: a new client on the same thread, with no messages and no pending interrupts of its own. A run
// with no new input reports the thread, and its interrupt outcome gives the pending interrupts back in full.
const reloaded = new HttpAgent({ url, threadId, headers });
const reload = await run({ runId: "js-run-reload" }, reloaded);
const reloadedPending = reloaded.pendingInterrupts.map((interrupt) => ({ ...interrupt }));
const reloadedMessages = reloaded.messages.map((message) => message.id);

// The reloaded client answers: the run resumes where the first client left it.
const answers = Object.fromEntries(pending.map((interrupt) => [interrupt.id, { status: "resolved", payload: "y" }]));
const resume = buildResumeArray(reloaded.pendingInterrupts, answers);
const second = await run({ runId: "js-run-2", resume }, reloaded);

console.log(
  JSON.stringify({
    first,
    pending,
    clientRefusal,
    reload,
    reloadedPending,
    reloadedMessages,
    firstMessages: agent.messages.map((message) => message.id),
    resume,
    second,
    pendingAfter: reloaded.pendingInterrupts,
    messages: reloaded.messages,
    state: reloaded.state,
  }),
);
