// server-everything over stdio plus one tool whose taskSupport is "optional" (it has none of its own),
// registered with the official SDK's task API on the same server and task store.
// Usage: node everything_optional_task.mjs <node_modules folder>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const { createServer } = await load("@modelcontextprotocol/server-everything/dist/server/index.js");
const { StdioServerTransport } = await load("@modelcontextprotocol/sdk/dist/esm/server/stdio.js");
const { z } = await load("zod/index.js");

const { server, cleanup } = createServer();

// Counts to `steps`, one step every `stepMs`, reporting each step as the task's status message.
// `fail: true` ends the task as failed halfway; a cancelled task stops counting.
async function count(taskId, args, store) {
  for (let step = 1; step <= args.steps; step++) {
    const current = await store.getTask(taskId);
    if (!current || current.status === "cancelled") return;
    await store.updateTaskStatus(taskId, "working", `Step ${step} of ${args.steps}`);
    await new Promise((resolve) => setTimeout(resolve, args.stepMs));
    if (args.fail && step * 2 >= args.steps) {
      await store.storeTaskResult(taskId, "failed", {
        content: [{ type: "text", text: `Counting broke at step ${step}` }],
        isError: true,
      });
      return;
    }
  }
  const current = await store.getTask(taskId);
  if (!current || current.status === "cancelled") return;
  await store.storeTaskResult(taskId, "completed", {
    content: [{ type: "text", text: `Counted to ${args.steps}` }],
  });
}

server.experimental.tasks.registerToolTask(
  "count-slowly",
  {
    title: "Count slowly",
    description: "Counts to `steps`, one step every `stepMs` milliseconds; runs as a task or not.",
    inputSchema: {
      steps: z.number().int().min(1).max(100).default(3),
      stepMs: z.number().int().min(1).max(10000).default(200),
      fail: z.boolean().default(false),
    },
    execution: { taskSupport: "optional" },
  },
  {
    createTask: async (args, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 120000, pollInterval: 100 });
      count(task.taskId, args, extra.taskStore).catch((error) =>
        extra.taskStore.updateTaskStatus(task.taskId, "failed", String(error)).catch(() => {}),
      );
      return { task };
    },
    getTask: async (args, extra) => await extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (args, extra) => await extra.taskStore.getTaskResult(extra.taskId),
  },
);

await server.connect(new StdioServerTransport());
process.stdin.on("close", async () => {
  await server.close();
  cleanup();
  process.exit(0);
});
