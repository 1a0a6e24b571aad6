//! The MCP side: rmcp's `ServerHandler` listing the tools with their schemas and descriptions,
//! and running each call on the shared store off the async runtime.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::grant_scope::bind;
use super::tokens::Grant;
use crate::share::Shared;

/// What the server tells a model about itself.
const INSTRUCTIONS: &str = "Long-term memory that persists across conversations. Before \
answering, `recall` (or `context`) what you may already know about the topic; `remember` facts, \
decisions and preferences worth keeping, each as one self-contained text; after using a memory, \
rate it with `feedback`; record finished work with `record_task`. Memories fade when unused and \
are reinforced when recalled.";

/// The MCP server of one shared store.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
    tools: Arc<Vec<Tool>>,
    /// The largest answer of one tool call, in bytes.
    max_reply_bytes: usize,
}

impl Server {
    /// A server for `shared` whose tool answers are at most `max_reply_bytes`.
    pub fn new(shared: Arc<Shared>, max_reply_bytes: usize) -> Self {
        Server {
            shared,
            tools: Arc::new(tools()),
            max_reply_bytes,
        }
    }
}

/// Every tool: the registry's operations on the MCP door, each with its request's schema and
/// its doc (written for a model).
fn tools() -> Vec<Tool> {
    memloop::Operation::ALL
        .into_iter()
        .filter(|op| op.on(memloop::Door::Mcp))
        .map(|op| {
            let schema = match op.request_schema() {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let answer = match op.answer_schema() {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            // The answer's schema too: a client checks each structured answer against it.
            Tool::new(op.name(), op.doc(), Arc::new(schema))
                .with_raw_output_schema(Arc::new(answer))
        })
        .collect()
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new(
            "memloop",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if self.get_tool(&name).is_none() {
            let code = memloop::ErrorCode::InvalidInput.name();
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}` (error code {code})"),
                None,
            ));
        }
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        Ok(match self.run(name, arguments, &context).await? {
            Ok(reply) => match over_cap(&reply, self.max_reply_bytes) {
                Some(why) => CallToolResult::error(vec![ContentBlock::text(why)]),
                None => {
                    let mut r = CallToolResult::success(vec![ContentBlock::text(reply.text)]);
                    r.structured_content = Some(reply.structured);
                    r
                }
            },
            Err(why) => CallToolResult::error(vec![ContentBlock::text(why)]),
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut stats = Resource::new(STATS_URI, "stats");
        stats.description = Some("Counts: memories, per tier, indexed, and the model.".into());
        stats.mime_type = Some("application/json".into());
        Ok(ListResourcesResult::with_all_items(vec![stats]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut memory = ResourceTemplate::new(format!("{MEMORY_URI}{{id}}"), "memory");
        memory.description = Some("One memory by id, with all its fields.".into());
        memory.mime_type = Some("application/json".into());
        Ok(ListResourceTemplatesResult::with_all_items(vec![memory]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let (tool, arguments) = if uri == STATS_URI {
            ("stats", serde_json::json!({}))
        } else if let Some(id) = uri
            .strip_prefix(MEMORY_URI)
            .and_then(|id| id.parse::<u64>().ok())
        {
            ("get", serde_json::json!({ "id": id }))
        } else {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{uri}` (memloop://stats, memloop://memory/{{id}})"),
                None,
            ));
        };
        match self.run(tool.to_string(), arguments, &context).await? {
            Ok(reply) => {
                let text = reply.structured.to_string();
                let contents = ResourceContents::TextResourceContents {
                    uri,
                    mime_type: Some("application/json".into()),
                    text,
                    meta: None,
                };
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
            Err(why) => Err(ErrorData::resource_not_found(format!("{uri}: {why}"), None)),
        }
    }
}

/// Why `reply` is not sent: its text and structured content together are over `cap` bytes
/// (a recall of many long memories); `None` to send it. The cap holds on every MCP
/// transport: a client asks for fewer hits or a smaller budget.
fn over_cap(reply: &crate::mcp::tools::Reply, cap: usize) -> Option<String> {
    // Counted as it is written, nothing kept, and stopped at the cap: rmcp serialises the
    // reply for the wire afterwards, and a reply far over the cap costs no more than the cap.
    struct Count {
        bytes: usize,
        cap: usize,
    }
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.bytes += b.len();
            if self.bytes > self.cap {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count {
        bytes: reply.text.len(),
        cap,
    };
    let fits = count.bytes <= cap && serde_json::to_writer(&mut count, &reply.structured).is_ok();
    (!fits).then(|| {
        format!(
            "error code {}: the reply is over the {cap} bytes an MCP reply may carry: ask for fewer hits (k) or a smaller budget",
            memloop::ErrorCode::InvalidInput.name()
        )
    })
}

/// The store's statistics as a resource.
const STATS_URI: &str = "memloop://stats";
/// A memory as a resource: this prefix and its id.
const MEMORY_URI: &str = "memloop://memory/";

impl Server {
    /// Runs tool `name` on the store: over HTTP bound to the token's scope first (`http.rs`
    /// puts the grant on the request), then on tokio's blocking pool (the engine embeds and
    /// fsyncs). The outer error is the runtime's; the inner one the tool's text.
    async fn run(
        &self,
        name: String,
        arguments: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Result<crate::mcp::tools::Reply, String>, ErrorData> {
        let grant = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Grant>());
        let arguments = match grant {
            Some(g) => match bind(g, &name, arguments) {
                Ok(a) => a,
                Err(why) => {
                    let code = memloop::ErrorCode::InvalidInput.name();
                    return Ok(Err(format!("error code {code}: {why}")));
                }
            },
            None => arguments,
        };
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || shared.call(&name, arguments).map_err(|e| e.0))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool call failed: {e}"), None))
    }
}
