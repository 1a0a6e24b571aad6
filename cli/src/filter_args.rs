//! The filter flags `recall` and `list` share: namespace, kinds, tags, history, scope, as-of.

use clap::Args;
use serde_json::{json, Value};

use crate::scope_args::ScopeArgs;

/// Which memories a command reaches.
#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only this namespace.
    #[arg(long)]
    pub namespace: Option<String>,
    /// Only these kinds (repeat for several).
    #[arg(long = "kind")]
    pub kinds: Vec<String>,
    /// Only memories with every one of these tags.
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Also superseded versions.
    #[arg(long)]
    pub history: bool,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// What was true at this time (Unix seconds or RFC 3339), older versions included.
    #[arg(long)]
    pub as_of: Option<String>,
}

impl FilterArgs {
    /// Adds the flags a tool takes to its arguments.
    pub fn add_to(&self, arguments: &mut Value) {
        arguments["namespace"] = json!(self.namespace);
        arguments["history"] = json!(self.history);
        arguments["kinds"] = json!(self.kinds);
        arguments["tags"] = json!(self.tags);
        arguments["as_of"] = json!(self.as_of);
        self.scope.add_to(arguments);
    }
}
