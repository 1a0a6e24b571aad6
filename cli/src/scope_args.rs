//! `--user`, `--agent`, `--session`: whose memories a command writes, reads or erases.

use clap::Args;
use memloop::Scope;

/// The scope flags shared by remember, recall, context, export and forget.
#[derive(Args, Debug, Clone, Default)]
pub struct ScopeArgs {
    /// The user the memories belong to (recall, context and export: only theirs).
    #[arg(long)]
    pub user: Option<String>,
    /// The agent the memories belong to.
    #[arg(long)]
    pub agent: Option<String>,
    /// The session (conversation, run) the memories belong to.
    #[arg(long)]
    pub session: Option<String>,
}

impl ScopeArgs {
    /// The engine's scope.
    pub fn scope(&self) -> Scope {
        Scope {
            user: self.user.clone(),
            agent: self.agent.clone(),
            session: self.session.clone(),
        }
    }
}
