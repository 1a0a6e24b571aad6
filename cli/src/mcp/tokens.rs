//! The bearer tokens of `memloop mcp --http`: a private file (0600) in the store directory,
//! one token a line, each unbound (the whole store) or bound to a scope (`user=alice`,
//! `agent=helper`): a bound token's calls act as that scope in the engine. Only the tokens'
//! sha256 digests are kept in memory, and a presented token is compared with each in constant
//! time (`subtle`).
//!
//! ```text
//! # memloop mcp tokens: TOKEN [user=NAME] [agent=NAME]
//! 3f9c…e1
//! 77ab…02 user=alice
//! ```

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use memloop::Scope;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The tokens file's name in the store directory.
pub const TOKENS_FILE: &str = "mcp-tokens";

/// The first line of a tokens file.
const HEADER: &str = "# memloop mcp tokens: TOKEN [user=NAME] [agent=NAME]";

/// What a token may reach: the whole store, or one scope's memories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    /// The scope every call acts in; empty: the whole store.
    pub scope: Scope,
}

/// The tokens a server accepts.
pub struct Tokens {
    entries: Vec<([u8; 32], Grant)>,
}

/// Shows how many tokens, never their digests.
impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} tokens)", self.entries.len())
    }
}

/// The SHA-256 of a token (what is stored and compared).
pub(crate) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A new random token: 32 bytes from the operating system, as hex.
pub(crate) fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Tokens {
    /// The tokens in `path`.
    ///
    /// # Errors
    /// A file others may read or write, or a line that is not `TOKEN [user=…] [agent=…]`.
    pub fn load(path: &Path) -> Result<Tokens> {
        let meta = std::fs::metadata(path).with_context(|| format!("read {}", path.display()))?;
        if meta.permissions().mode() & 0o077 != 0 {
            bail!(
                "{} may be read by other users (mode {:o}); chmod 600 it",
                path.display(),
                meta.permissions().mode() & 0o777
            );
        }
        let text = std::fs::read_to_string(path)?;
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let token = words.next().unwrap_or_default();
            if token.len() < 32 {
                bail!(
                    "{} line {}: a token of fewer than 32 characters",
                    path.display(),
                    n + 1
                );
            }
            let mut scope = Scope::default();
            for word in words {
                match word.split_once('=') {
                    Some(("user", v)) if !v.is_empty() => scope.user = Some(v.to_string()),
                    Some(("agent", v)) if !v.is_empty() => scope.agent = Some(v.to_string()),
                    _ => bail!(
                        "{} line {}: `{word}` is neither user=NAME nor agent=NAME",
                        path.display(),
                        n + 1
                    ),
                }
            }
            entries.push((digest(token), Grant { scope }));
        }
        if entries.is_empty() {
            bail!("{} holds no token", path.display());
        }
        Ok(Tokens { entries })
    }

    /// The grant of `presented`, if it is one of the tokens. Every digest is compared, each in
    /// constant time, whatever matches.
    pub fn grant(&self, presented: &str) -> Option<Grant> {
        let d = digest(presented);
        let mut found = None;
        for (known, grant) in &self.entries {
            if bool::from(known.ct_eq(&d)) {
                found = Some(grant.clone());
            }
        }
        found
    }
}

/// The tokens file of the store in `dir` (or `file`), created with one unbound token when it
/// does not exist; returns its path and the new token when one was made (to print once).
///
/// # Errors
/// The file cannot be created or read.
pub fn ensure(dir: &Path, file: Option<&Path>) -> Result<(PathBuf, Option<String>)> {
    let path = file.map_or_else(|| dir.join(TOKENS_FILE), Path::to_path_buf);
    if path.exists() {
        return Ok((path, None));
    }
    let token = new_token();
    write_new(&path, &format!("{HEADER}\n{token}\n"))?;
    Ok((path, Some(token)))
}

/// Writes `text` to a new 0600 file at `path`, all or nothing (a temporary file renamed).
fn write_new(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("create {}", tmp.display()))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("write {}", path.display()))?;
    Ok(())
}

/// `memloop token`.
#[derive(Args, Debug)]
pub struct TokenArgs {
    #[command(subcommand)]
    action: TokenAction,
    /// The tokens file (default: STORE/mcp-tokens).
    #[arg(long, global = true)]
    token_file: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum TokenAction {
    /// Replace every unbound token with a new one, printed once (bound tokens stay).
    Rotate,
    /// Add a token bound to a user and/or an agent, printed once: its calls reach only that
    /// scope's memories.
    Add {
        /// The user the token acts as.
        #[arg(long)]
        user: Option<String>,
        /// The agent the token acts as.
        #[arg(long)]
        agent: Option<String>,
    },
}

/// Runs `memloop token` for the store in `dir`.
///
/// # Errors
/// The file cannot be read or written; `add` with neither a user nor an agent.
pub fn run(dir: &Path, a: &TokenArgs) -> Result<()> {
    let path = a
        .token_file
        .clone()
        .unwrap_or_else(|| dir.join(TOKENS_FILE));
    let old = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => format!("{HEADER}\n"),
        Err(e) => return Err(e).with_context(|| format!("read {}", path.display())),
    };
    let token = new_token();
    let kept: Vec<&str> = old.lines().collect();
    let text = match &a.action {
        TokenAction::Rotate => {
            let bound = |l: &&str| l.starts_with('#') || l.split_whitespace().nth(1).is_some();
            let mut lines: Vec<String> = kept.into_iter().filter(bound).map(String::from).collect();
            lines.push(token.clone());
            lines.join("\n") + "\n"
        }
        TokenAction::Add { user, agent } => {
            if user.is_none() && agent.is_none() {
                bail!("a bound token needs --user or --agent (memloop token rotate makes an unbound one)");
            }
            let mut line = token.clone();
            for (key, value) in [("user", user), ("agent", agent)] {
                if let Some(v) = value {
                    if v.is_empty() || v.chars().any(char::is_whitespace) {
                        bail!("{key} must be a non-empty name without spaces");
                    }
                    line.push_str(&format!(" {key}={v}"));
                }
            }
            let mut lines: Vec<String> = kept.into_iter().map(String::from).collect();
            lines.push(line);
            lines.join("\n") + "\n"
        }
    };
    let _ = std::fs::remove_file(path.with_extension("tmp"));
    write_new(&path, &text)?;
    println!("{token}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_made_private_read_back_and_matched_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let (path, made) = ensure(dir.path(), None).unwrap();
        let token = made.unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(ensure(dir.path(), None).unwrap().1.is_none(), "made once");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{} user=alice agent=helper", "b".repeat(64)).unwrap();
        let tokens = Tokens::load(&path).unwrap();
        assert_eq!(tokens.grant(&token), Some(Grant::default()));
        let bound = tokens.grant(&"b".repeat(64)).unwrap();
        assert_eq!(bound.scope.user.as_deref(), Some("alice"));
        assert_eq!(bound.scope.agent.as_deref(), Some("helper"));
        assert_eq!(tokens.grant(&token[..63]), None);
        assert_eq!(tokens.grant(""), None);
    }

    #[test]
    fn a_file_others_may_read_or_a_bad_line_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKENS_FILE);
        std::fs::write(&path, format!("{}\n", "a".repeat(64))).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(Tokens::load(&path)
            .unwrap_err()
            .to_string()
            .contains("chmod 600"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, "short\n").unwrap();
        assert!(Tokens::load(&path).is_err());
        std::fs::write(&path, format!("{} role=admin\n", "a".repeat(64))).unwrap();
        assert!(Tokens::load(&path).is_err());
    }
}
