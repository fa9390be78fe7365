// The `add` tool on the official MCP TypeScript SDK 2.0 (@modelcontextprotocol/server and /node, pinned
// through the MCP Apps example servers in mcp_servers/package.json): a benchmark server. Its
// `createMcpHandler` serves 2026-07-28 statelessly and 2025-era requests by its stateless fallback,
// over node:http; `serveStdio` serves both revisions over stdio. Node's own time per call is a
// fraction of the Python SDK's, so more of each round trip is the client's (bench/mcp.py).
// Usage: node sdk_ts_server.mjs <node_modules folder> stdio
//        node sdk_ts_server.mjs <node_modules folder> http PORT    (127.0.0.1:PORT, any path)
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const { McpServer, createMcpHandler, fromJsonSchema } = await load(
  "@modelcontextprotocol/server/dist/index.mjs",
);

const inputSchema = fromJsonSchema({
  type: "object",
  properties: { a: { type: "integer" }, b: { type: "integer" } },
  required: ["a", "b"],
});

// One server per request (the SDK's model for stateless serving) or per stdio connection.
function factory() {
  const server = new McpServer({ name: "yiem-bench-ts", version: "1.0.0" });
  server.registerTool("add", { description: "Add two numbers.", inputSchema }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  return server;
}

if (process.argv[3] === "http") {
  const { toNodeHandler } = await load("@modelcontextprotocol/node/dist/index.mjs");
  const handler = toNodeHandler(createMcpHandler(factory));
  createServer((request, response) => handler(request, response)).listen(
    Number(process.argv[4]),
    "127.0.0.1",
  );
} else {
  const { serveStdio } = await load("@modelcontextprotocol/server/dist/stdio.mjs");
  serveStdio(factory);
}
