// An MCP client as desktop assistants and agent frameworks run it: the official TypeScript
// SDK's Client over its Streamable HTTP transport, with an agent token in the Authorization
// header. tests/e2e/mcp.rs starts the local HTTP gateway, then runs
//
//   node client.mjs <url> <token> agent '<{"read":{name,arguments},"prepare":{name,arguments}}>'
//   node client.mjs <url> <token> refused
//
// and reads the one JSON line this prints on stdout. `agent` connects, lists every tool page
// by page (the SDK checks each page against its ListToolsResultSchema; this checks them again
// and checks each tool's schemas), calls the read tool and the prepare tool (the SDK checks
// each structuredContent against the tool's outputSchema), and fails (exit 1) on anything else.
// `refused` expects the connection to be refused with HTTP 401.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListToolsResultSchema, CallToolResultSchema, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

const [url, token, scenario, argsJson] = process.argv.slice(2);
if (!url || !token || !scenario) {
  console.error("usage: node client.mjs <url> <token> agent|refused [<args json>]");
  process.exit(2);
}

function connect() {
  const client = new Client({ name: "tool-host-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  return { client, transport };
}

function fail(message) {
  console.error(`client.mjs: ${message}`);
  process.exit(1);
}

async function agent(args) {
  const { client, transport } = connect();
  await client.connect(transport);
  const server = client.getServerVersion();
  const capabilities = client.getServerCapabilities();
  if (!capabilities?.tools) fail(`the server offers no tools capability: ${JSON.stringify(capabilities)}`);

  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    ListToolsResultSchema.parse(page);
    pages += 1;
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (pages > 100) fail("more than 100 pages of tools");
  } while (cursor !== undefined);
  for (const t of tools) {
    if (t.inputSchema?.type !== "object") fail(`${t.name}: inputSchema is not an object schema`);
    if (t.outputSchema !== undefined && t.outputSchema.type !== "object") fail(`${t.name}: outputSchema is not an object schema`);
  }
  const names = tools.map((t) => t.name);
  if (new Set(names).size !== names.length) fail(`a tool is listed twice: ${names}`);

  const call = async (what) => {
    const r = await client.callTool({ name: what.name, arguments: what.arguments });
    CallToolResultSchema.parse(r);
    return r;
  };
  const read = await call(args.read);
  if (read.isError) fail(`${args.read.name} answered an error: ${JSON.stringify(read.content)}`);
  const prepared = await call(args.prepare);
  if (prepared.isError) fail(`${args.prepare.name} answered an error: ${JSON.stringify(prepared.content)}`);
  const outputSchemas = Object.fromEntries(tools.filter((t) => t.outputSchema).map((t) => [t.name, true]));
  await client.close();
  return {
    protocolVersion: transport.protocolVersion ?? null,
    latestProtocolVersion: LATEST_PROTOCOL_VERSION,
    server,
    pages,
    tools: names,
    outputSchemas,
    read: read.structuredContent ?? null,
    prepared: prepared.structuredContent ?? null,
  };
}

async function refused() {
  const { client, transport } = connect();
  try {
    await client.connect(transport);
  } catch (e) {
    if (e instanceof StreamableHTTPError) return { refused: true, status: e.code, message: e.message };
    fail(`refused, but not by an HTTP status: ${e}`);
  }
  await client.close();
  fail("connected with a token that should be refused");
}

try {
  const out = scenario === "agent" ? await agent(JSON.parse(argsJson ?? "{}"))
    : scenario === "refused" ? await refused()
    : fail(`unknown scenario ${scenario}`);
  console.log(JSON.stringify(out));
} catch (e) {
  fail(`${e?.stack ?? e}`);
}
