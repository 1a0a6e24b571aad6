//! The filter flags `recall` and `list` share: namespace, kinds, tags, history, scope, as-of.

use clap::Args;
use memloop::requests::{Selection, When};
use memloop::Scope;

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
    /// The selection these flags make (the scope apart: [`FilterArgs::scope`]).
    pub fn selection(&self) -> Selection {
        Selection {
            namespace: self.namespace.clone(),
            kinds: self.kinds.clone(),
            tags: self.tags.clone(),
            history: self.history,
            as_of: self.as_of.clone().map(When::Text),
        }
    }

    /// The scope these flags name.
    pub fn scope(&self) -> Scope {
        self.scope.scope()
    }
}
