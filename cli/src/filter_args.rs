//! The filter flags `recall` and `scan` share: namespace, kinds, tags, history, scope, as-of.

use anyhow::Result;
use clap::Args;
use memloop::{Kind, MemoryFilter};
use serde_json::{json, Value};

use crate::scope_args::ScopeArgs;
use crate::time_arg::{optional_time, parse_time_checked};

/// A kind named on the command line.
pub(crate) fn parse_kind(s: &str) -> Result<Kind, String> {
    Kind::named(s).map_err(|e| e.to_string())
}

/// Which memories a command reaches.
#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only this namespace.
    #[arg(long)]
    pub namespace: Option<String>,
    /// Only these kinds (repeat for several).
    #[arg(long = "kind", value_parser = parse_kind)]
    pub kinds: Vec<Kind>,
    /// Only memories with every one of these tags.
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Also superseded versions.
    #[arg(long)]
    pub history: bool,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// What was true at this time (Unix seconds or RFC 3339), older versions included.
    #[arg(long, value_parser = parse_time_checked)]
    pub as_of: Option<String>,
}

impl FilterArgs {
    /// The engine's filter.
    pub fn filter(&self) -> Result<MemoryFilter> {
        let as_of = optional_time(self.as_of.as_deref(), "--as-of").map_err(anyhow::Error::msg)?;
        Ok(MemoryFilter {
            namespace: self.namespace.clone(),
            kinds: self.kinds.clone(),
            tags: self.tags.clone(),
            include_superseded: self.history,
            as_of,
            ..MemoryFilter::default()
        }
        .scope(self.scope.scope()))
    }

    /// Adds the flags a tool takes to its arguments.
    pub fn add_to(&self, arguments: &mut Value) {
        arguments["namespace"] = json!(self.namespace);
        arguments["history"] = json!(self.history);
        arguments["kinds"] = json!(self.kinds.iter().map(|k| k.name()).collect::<Vec<_>>());
        arguments["tags"] = json!(self.tags);
        arguments["as_of"] = json!(self.as_of);
        self.scope.add_to(arguments);
    }
}
