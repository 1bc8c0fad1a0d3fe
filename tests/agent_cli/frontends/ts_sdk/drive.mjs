// Drives `nerve` with Anthropic's TypeScript Agent SDK (@anthropic-ai/claude-agent-sdk), the
// way a program built on it would: `query()` with options, callbacks and hooks.
//
//   node drive.mjs CASE        (env: NERVE_BIN = the nerve executable, NERVE_CWD = the project)
//
// Prints one JSON object a line on stdout: {"event": "message", "message": ...} for each
// message the SDK yields, {"event": "can_use_tool" | "hook" | "tool_call", ...} for each
// callback it makes, "interrupted" / "supported_agents" for what a case did or asked,
// {"event": "error", "message": ...} if the query throws, and {"event": "end"} last.
// tests/agent_cli/frontends/test_ts_sdk.py runs it against the scripted Messages server.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const emit = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");

const base = {
  pathToClaudeCodeExecutable: process.env.NERVE_BIN,
  cwd: process.env.NERVE_CWD,
  env: { ...process.env },
  stderr: (data) => process.stderr.write(data),
};

// A prompt stream (streaming input mode, which interrupt() needs): each prompt is sent after
// the previous one's result arrived; the stream ends after the last result.
function promptStream(prompts, results) {
  return (async function* () {
    for (const [i, text] of prompts.entries()) {
      if (i > 0) await results.next(i);
      yield {
        type: "user",
        message: { role: "user", content: text },
        parent_tool_use_id: null,
        session_id: "",
      };
    }
    await results.next(prompts.length);
  })();
}

// Counts the result messages seen, so promptStream can wait for the n-th.
function resultCounter() {
  let seen = 0;
  const waiters = [];
  return {
    saw() {
      seen += 1;
      for (const w of waiters.splice(0)) if (seen >= w.n) w.resolve(); else waiters.push(w);
    },
    count() {
      return seen;
    },
    next(n) {
      return seen >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}

const cases = {
  plain: () => query({ prompt: "say hello", options: { ...base, systemPrompt: "You are terse." } }),

  // --no-session-persistence
  no_persist: () => query({ prompt: "say hello", options: { ...base, persistSession: false } }),

  append: () =>
    query({
      prompt: "say hello",
      options: { ...base, systemPrompt: { type: "preset", preset: "claude_code", append: "End with 'Arr.'" } },
    }),

  can_use_tool_allow: () =>
    query({
      prompt: "touch a file",
      options: {
        ...base,
        canUseTool: async (toolName, input, { toolUseID, suggestions }) => {
          emit("can_use_tool", { toolName, input, toolUseID, suggestions });
          return { behavior: "allow", updatedInput: { ...input, command: "touch changed.txt" } };
        },
      },
    }),

  can_use_tool_deny: () =>
    query({
      prompt: "touch a file",
      options: {
        ...base,
        canUseTool: async (toolName, input, { toolUseID }) => {
          emit("can_use_tool", { toolName, input, toolUseID });
          return { behavior: "deny", message: "no bash today" };
        },
      },
    }),

  hook_deny: () =>
    query({
      prompt: "touch a file",
      options: {
        ...base,
        permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true,
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [
                async (input, toolUseID) => {
                  emit("hook", { input, toolUseID });
                  return {
                    hookSpecificOutput: {
                      hookEventName: "PreToolUse",
                      permissionDecision: "deny",
                      permissionDecisionReason: "the hook says no",
                    },
                  };
                },
              ],
            },
          ],
        },
      },
    }),

  // an in-process MCP server (the SDK sends its name in initialize's sdkMcpServers) and an
  // external one that cannot start (sent in initialize's mcpServers, with --await-initialize)
  sdk_mcp: () => {
    const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
      emit("tool_call", { name: "add", a, b });
      return { content: [{ type: "text", text: `sum: ${a + b}` }] };
    });
    const calc = createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
    return query({
      prompt: "add 2 and 3",
      options: {
        ...base,
        mcpServers: { calc, broken: { command: "/nonexistent/mcp-server" } },
        allowedTools: ["mcp__calc__add"],
      },
    });
  },

  // programmatic sub-agents (sent in initialize's agents)
  agents: async function* () {
    const q = query({
      prompt: "review a.py",
      options: {
        ...base,
        allowedTools: ["Agent"],
        agents: {
          reviewer: { description: "Reviews code", prompt: "REVIEWPROMPT", tools: ["Read"] },
        },
      },
    });
    emit("supported_agents", { agents: await q.supportedAgents() });
    yield* q;
  },

  // passed as --thinking=adaptive --effort=low, and --max-thinking-tokens=2048
  thinking: () =>
    query({
      prompt: "think",
      options: { ...base, model: "claude-sonnet-4-6", thinking: { type: "adaptive" }, effort: "low" },
    }),

  thinking_budget: () =>
    query({
      prompt: "think",
      options: { ...base, model: "claude-sonnet-4-6", maxThinkingTokens: 2048 },
    }),

  max_turns: () => query({ prompt: "list files forever", options: { ...base, maxTurns: 1 } }),
};

async function main(name) {
  if (name === "interrupt") return interrupt();
  if (name === "set_thinking") return setThinking();
  const make = cases[name];
  if (!make) throw new Error(`unknown case ${name}`);
  for await (const message of make()) emit("message", { message });
}

// Two prompts in one session: the first runs a slow command, interrupted once its tool call is
// seen; the second gets an answer.
async function interrupt() {
  const results = resultCounter();
  const q = query({
    prompt: promptStream(["wait a long time", "and now?"], results),
    options: { ...base, permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true },
  });
  for await (const message of q) {
    emit("message", { message });
    if (message.type === "assistant" && message.message.content.some((b) => b.type === "tool_use")) {
      await q.interrupt();
      emit("interrupted");
    }
    if (message.type === "result") results.saw();
  }
}

// Two prompts: the first with adaptive thinking, then setMaxThinkingTokens(0) (off) before the
// second.
async function setThinking() {
  const results = resultCounter();
  const q = query({
    prompt: promptStream(["think first", "then not"], results),
    options: { ...base, model: "claude-sonnet-4-6", thinking: { type: "adaptive" } },
  });
  for await (const message of q) {
    emit("message", { message });
    if (message.type === "result") {
      if (results.count() === 0) await q.setMaxThinkingTokens(0);
      results.saw();
    }
  }
}

try {
  await main(process.argv[2]);
} catch (error) {
  emit("error", { message: String(error?.message ?? error) });
}
emit("end");
