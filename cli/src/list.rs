//! `memloop list` (`scan` is the same command): the registry's `list` operation, the memories
//! a filter admits by ascending id, a page at a time, without a query.

use anyhow::Result;
use clap::Args;
use memloop::requests::ListRequest;
use memloop::Request;

use crate::filter_args::FilterArgs;
use crate::store_args::StoreArgs;
use crate::tool_call::ToolCall;

/// `memloop list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    filter: FilterArgs,
    /// At most this many memories (default 1000, at most 100000).
    #[arg(long)]
    limit: Option<usize>,
    /// Skip this many of the memories the filter admits first.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Print the answer as JSON: `{"memories": [...]}`.
    #[arg(long)]
    json: bool,
}

impl From<&ListArgs> for ListRequest {
    fn from(a: &ListArgs) -> ListRequest {
        ListRequest {
            selection: a.filter.selection(),
            scope: a.filter.scope(),
            limit: a.limit,
            offset: a.offset,
        }
    }
}

impl ListArgs {
    /// This command as the `list` operation (run here or by the process serving the store).
    pub fn as_tool(&self) -> ToolCall {
        ToolCall::operation(Request::List(self.into()), self.json)
    }
}

/// `memloop list`: the `list` operation run on the store opened here.
pub fn list(store: &StoreArgs, a: &ListArgs) -> Result<()> {
    crate::commands::run_here(store, a.as_tool())
}
