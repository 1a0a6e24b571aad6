//! The bearer tokens of `memloop mcp --http`: a private file (0600) in the store directory,
//! one token a line, each unbound (the whole store) or bound to a scope (`user=alice`,
//! `agent=helper`): a bound token's calls act as that scope in the engine. The file holds
//! only each token's sha256 digest (`sha256:` and 64 hex digits; a token is printed once, when
//! it is made), so a copy of the file or of a backup of the store opens nothing; a line of a
//! raw token (written by hand, or by an older memloop) is still accepted, and rewritten as its
//! digest by the next `memloop token`. A presented token's digest is compared with each in
//! constant time (`subtle`).
//!
//! ```text
//! # memloop mcp tokens: sha256:DIGEST (or TOKEN) [user=NAME] [agent=NAME]
//! sha256:3f9c…e1
//! sha256:77ab…02 user=alice
//! ```
//!
//! The file is the truth while a server runs: it is read again whenever it changes, and a
//! file that is gone, unreadable or malformed revokes every token (the server answers 401
//! until a valid file is back); a digest named twice is refused as an ambiguous file.

use std::io::Write;
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
const HEADER: &str = "# memloop mcp tokens: sha256:DIGEST (or TOKEN) [user=NAME] [agent=NAME]";

/// What a line holding a digest starts with.
const DIGEST_PREFIX: &str = "sha256:";

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
        let exposed =
            memloop::privacy::exposed(path).with_context(|| format!("read {}", path.display()))?;
        if let Some(why) = exposed {
            bail!("{} may be read by other users ({why})", path.display());
        }
        let text = std::fs::read_to_string(path)?;
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let first = words.next().unwrap_or_default();
            let Some(known) = stored_digest(first) else {
                bail!(
                    "{} line {}: neither sha256:DIGEST (64 hex digits) nor a token of 32 characters or more",
                    path.display(),
                    n + 1
                );
            };
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
            if entries.iter().any(|(d, _)| *d == known) {
                bail!(
                    "{} line {}: a token named twice (which grant holds would be a guess)",
                    path.display(),
                    n + 1
                );
            }
            entries.push((known, Grant { scope }));
        }
        if entries.is_empty() {
            bail!("{} holds no token", path.display());
        }
        Ok(Tokens { entries })
    }

    /// No token at all: every request is refused (a tokens file gone or broken).
    pub fn none() -> Tokens {
        Tokens {
            entries: Vec::new(),
        }
    }

    /// True when no token is accepted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The grant of `presented`, if it is one of the tokens (the server digests a request's
    /// token once and calls [`Tokens::grant_of_digest`]).
    #[cfg(test)]
    pub fn grant(&self, presented: &str) -> Option<Grant> {
        self.grant_of_digest(&digest(presented))
    }

    /// The grant of the token whose digest is `d`, if it is one of the tokens. Every digest is
    /// compared, each in constant time, whatever matches.
    pub fn grant_of_digest(&self, d: &[u8; 32]) -> Option<Grant> {
        let mut found = None;
        for (known, grant) in &self.entries {
            if bool::from(known.ct_eq(d)) {
                found = Some(grant.clone());
            }
        }
        found
    }
}

/// The digest a line's first word stands for: `sha256:HEX` as written, or a raw token's.
fn stored_digest(word: &str) -> Option<[u8; 32]> {
    match word.strip_prefix(DIGEST_PREFIX) {
        Some(hex_digits) => {
            let mut d = [0u8; 32];
            hex::decode_to_slice(hex_digits, &mut d).ok()?;
            Some(d)
        }
        None => (word.len() >= 32).then(|| digest(word)),
    }
}

/// A token's line word as the file keeps it: its digest.
fn digest_word(token: &str) -> String {
    format!("{DIGEST_PREFIX}{}", hex::encode(digest(token)))
}

/// `line` of a tokens file with a raw token replaced by its digest (other lines as they are).
fn as_digest_line(line: &str) -> String {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return line.to_string();
    }
    let mut words = trimmed.split_whitespace();
    let first = words.next().unwrap_or_default();
    if first.starts_with(DIGEST_PREFIX) {
        return line.to_string();
    }
    std::iter::once(digest_word(first))
        .chain(words.map(String::from))
        .collect::<Vec<_>>()
        .join(" ")
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
    write_new(&path, &format!("{HEADER}\n{}\n", digest_word(&token)))?;
    Ok((path, Some(token)))
}

/// Writes `text` to a new 0600 file at `path`, all or nothing (a temporary file renamed).
fn write_new(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = memloop::privacy::create_new_private(&tmp)
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
    // Raw tokens of an older file become digests as the file is rewritten; the header too.
    let kept: Vec<String> = old
        .lines()
        .map(|l| {
            if l.starts_with("# memloop mcp tokens") {
                HEADER.to_string()
            } else {
                as_digest_line(l)
            }
        })
        .collect();
    let text = match &a.action {
        TokenAction::Rotate => {
            let bound = |l: &String| l.starts_with('#') || l.split_whitespace().nth(1).is_some();
            let mut lines: Vec<String> = kept.into_iter().filter(bound).collect();
            lines.push(digest_word(&token));
            lines.join("\n") + "\n"
        }
        TokenAction::Add { user, agent } => {
            if user.is_none() && agent.is_none() {
                bail!("a bound token needs --user or --agent (memloop token rotate makes an unbound one)");
            }
            let mut line = digest_word(&token);
            for (key, value) in [("user", user), ("agent", agent)] {
                if let Some(v) = value {
                    if v.is_empty() || v.chars().any(char::is_whitespace) {
                        bail!("{key} must be a non-empty name without spaces");
                    }
                    line.push_str(&format!(" {key}={v}"));
                }
            }
            let mut lines: Vec<String> = kept;
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
        assert_eq!(memloop::privacy::exposed(&path).unwrap(), None);
        assert!(ensure(dir.path(), None).unwrap().1.is_none(), "made once");
        // The file holds the token's digest, never the token.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&token));
        assert!(text.contains(&digest_word(&token)));
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

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_read_or_a_bad_line_is_refused() {
        use std::os::unix::fs::PermissionsExt;
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
        // A digest that is not 64 hex digits; a token named twice (raw and as its digest).
        std::fs::write(&path, "sha256:abcd\n").unwrap();
        assert!(Tokens::load(&path).is_err());
        let t = "a".repeat(64);
        std::fs::write(&path, format!("{t}\n{} user=ana\n", digest_word(&t))).unwrap();
        assert!(Tokens::load(&path)
            .unwrap_err()
            .to_string()
            .contains("named twice"));
    }

    #[test]
    fn rewriting_the_file_turns_raw_tokens_into_digests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKENS_FILE);
        let old = "b".repeat(64);
        write_new(
            &path,
            &format!("# memloop mcp tokens: TOKEN\n{old} user=ana\n"),
        )
        .unwrap();
        let args = TokenArgs {
            action: TokenAction::Rotate,
            token_file: None,
        };
        run(dir.path(), &args).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&old), "{text}");
        assert!(text.contains(&format!("{} user=ana", digest_word(&old))));
        let tokens = Tokens::load(&path).unwrap();
        assert_eq!(
            tokens.grant(&old).unwrap().scope.user.as_deref(),
            Some("ana")
        );
    }
}
