//! The events `--http` has sent, kept a short while so that a client whose SSE stream broke can
//! reconnect with `Last-Event-ID` and receive what it missed, the call's result included, even
//! when the result was sent while it was away (Streamable HTTP's resumption).
//!
//! rmcp's own per-session cache forgets a call's stream the moment its result is sent; this log,
//! handed to rmcp as its `EventStore`, keeps every stream's events in memory, bounded in count,
//! bytes and age: the oldest go first. Event ids are 128 random bits, never written to disk.
//!
//! Ids are not secrets, though (clients and proxies log `id:` lines and `Last-Event-ID`), so
//! an event is replayed only to whoever it was sent to: as an event leaves in a reply, the
//! HTTP layer ([`ReplayLog::claim`]) records the token and the session it went to, and a
//! resumption is let through only for the same token and session ([`ReplayLog::owned_by`]);
//! it then replays only the stream's events that nobody else received.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rand::RngCore;
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream, ServerSseMessage,
};

/// How long an event can be replayed.
const KEEP: Duration = Duration::from_secs(60);

/// Events kept at most, over all streams.
const MAX_EVENTS: usize = 16_384;

/// Bytes of event payload kept at most, over all streams.
const MAX_BYTES: usize = 64 << 20;

/// Who an event was sent to: the digest of the token of the request whose reply carried it,
/// and that request's session (none on the stateless path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The token's sha256.
    pub token: [u8; 32],
    /// The `Mcp-Session-Id` of the request.
    pub session: Option<String>,
}

/// The replayable events of every stream, oldest first.
#[derive(Default)]
pub struct ReplayLog {
    inner: Mutex<Log>,
}

#[derive(Default)]
struct Log {
    /// Events in the order they were stored; `first` is the sequence number of the front one.
    events: VecDeque<Event>,
    first: u64,
    /// Sequence number of each kept event by id.
    by_id: HashMap<EventId, u64>,
    bytes: usize,
}

struct Event {
    id: EventId,
    stream: Arc<str>,
    message: ServerSseMessage,
    bytes: usize,
    at: Instant,
    /// Who received it, once its reply carried it.
    owner: Option<Arc<Owner>>,
}

impl Log {
    /// Drops the oldest events while any bound is passed.
    fn evict(&mut self, now: Instant) {
        while let Some(front) = self.events.front() {
            let stale = now.duration_since(front.at) > KEEP;
            if !stale && self.events.len() <= MAX_EVENTS && self.bytes <= MAX_BYTES {
                break;
            }
            let gone = self.events.pop_front().expect("a front event");
            self.by_id.remove(&gone.id);
            self.bytes -= gone.bytes;
            self.first += 1;
        }
    }
}

/// A fresh id: 128 random bits in hex.
fn random_id() -> EventId {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The payload size an event costs (its JSON), to bound the log's bytes.
fn size_of(event: &ServerSseMessage) -> usize {
    event
        .message
        .as_ref()
        .and_then(|m| serde_json::to_vec(m.as_ref()).ok())
        .map_or(0, |json| json.len())
        + 64
}

impl ReplayLog {
    /// Records that event `id` left in a reply to `owner` (the first claim holds: an id is
    /// known to nobody before its reply carries it).
    pub fn claim(&self, id: &str, owner: &Arc<Owner>) {
        let mut log = self.inner.lock();
        let Some(&seq) = log.by_id.get(id) else {
            return;
        };
        let at = (seq - log.first) as usize;
        if let Some(e) = log.events.get_mut(at) {
            e.owner.get_or_insert_with(|| owner.clone());
        }
    }

    /// Whether `owner` may resume after event `id`: it is kept and was sent to `owner`.
    pub fn owned_by(&self, id: &str, owner: &Owner) -> bool {
        let log = self.inner.lock();
        log.by_id
            .get(id)
            .and_then(|&seq| log.events.get((seq - log.first) as usize))
            .and_then(|e| e.owner.as_deref())
            .is_some_and(|o| o == owner)
    }
}

/// Finds the `id:` lines of an SSE stream as its chunks pass, wherever the chunks split it.
#[derive(Default)]
pub struct IdScanner {
    /// The unfinished last line of the chunks so far (an id line is short: a longer line is
    /// not kept, and skipped to its end).
    carry: Vec<u8>,
    skipping: bool,
}

/// The longest line [`IdScanner`] keeps across chunks.
const MAX_ID_LINE: usize = 512;

impl IdScanner {
    /// Feeds one chunk; calls `found` with each event id a completed line gives.
    pub fn feed(&mut self, chunk: &[u8], mut found: impl FnMut(&str)) {
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            let complete = piece.ends_with(b"\n");
            if !self.skipping {
                self.carry.extend_from_slice(piece);
            }
            if complete {
                if !self.skipping {
                    let line = self.carry.trim_ascii_end();
                    if let Some(id) = line.strip_prefix(b"id:") {
                        if let Ok(id) = std::str::from_utf8(id.trim_ascii()) {
                            found(id);
                        }
                    }
                }
                self.carry.clear();
                self.skipping = false;
            } else if self.carry.len() > MAX_ID_LINE {
                self.carry.clear();
                self.skipping = true;
            }
        }
    }
}

#[async_trait::async_trait]
impl EventStore for ReplayLog {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        let id = random_id();
        let bytes = size_of(event);
        let now = Instant::now();
        let mut log = self.inner.lock();
        // The stream's name is shared by its events.
        let stream = match log.events.back() {
            Some(last) if &*last.stream == stream_id => last.stream.clone(),
            _ => Arc::from(stream_id),
        };
        let seq = log.first + log.events.len() as u64;
        let mut message = event.clone();
        message.event_id = Some(id.clone());
        log.events.push_back(Event {
            id: id.clone(),
            stream,
            message,
            bytes,
            at: now,
            owner: None,
        });
        log.by_id.insert(id.clone(), seq);
        log.bytes += bytes;
        log.evict(now);
        Ok(id)
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        let mut log = self.inner.lock();
        log.evict(Instant::now());
        let Some(&seq) = log.by_id.get(last_event_id) else {
            return Err("that event is unknown or no longer kept".into());
        };
        let at = (seq - log.first) as usize;
        let stream = log.events[at].stream.clone();
        // An event never resumes a stream it was not sent on, and an event of the stream that
        // went to someone else (never, as streams go to one reply) is not replayed.
        let Some(owner) = log.events[at].owner.clone() else {
            return Err("that event was not delivered to anyone yet".into());
        };
        let later: Vec<ServerSseMessage> = log
            .events
            .iter()
            .skip(at + 1)
            .filter(|e| e.stream == stream)
            .filter(|e| e.owner.as_ref().is_none_or(|o| *o == owner))
            .map(|e| e.message.clone())
            .collect();
        Ok(Box::pin(futures::stream::iter(later)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::StreamExt;

    fn event() -> ServerSseMessage {
        ServerSseMessage::priming("0", Duration::from_secs(1))
    }

    #[test]
    fn replays_only_the_later_events_of_the_same_stream() {
        block_on(replays_later_events());
    }

    async fn replays_later_events() {
        let log = ReplayLog::default();
        let ana = Arc::new(Owner {
            token: [1; 32],
            session: Some("s1".into()),
        });
        let a1 = log.store_event("a", &event()).await.unwrap();
        let b1 = log.store_event("b", &event()).await.unwrap();
        let a2 = log.store_event("a", &event()).await.unwrap();
        let a3 = log.store_event("a", &event()).await.unwrap();
        // Not yet sent to anyone: nothing to resume from.
        assert!(log.replay_events_after(&a1).await.is_err());
        for id in [&a1, &b1] {
            log.claim(id, &ana);
        }
        let ids: Vec<_> = log
            .replay_events_after(&a1)
            .await
            .unwrap()
            .map(|e| e.event_id.unwrap())
            .collect()
            .await;
        assert_eq!(ids, vec![a2, a3.clone()]);
        let after_b: Vec<_> = log.replay_events_after(&b1).await.unwrap().collect().await;
        assert!(after_b.is_empty());
        assert!(log.replay_events_after("not-an-id").await.is_err());
        assert_ne!(a3.len(), 0);
    }

    #[test]
    fn an_event_resumes_only_for_the_token_and_session_it_went_to() {
        block_on(async {
            let log = ReplayLog::default();
            let ana = Arc::new(Owner {
                token: [1; 32],
                session: Some("s1".into()),
            });
            let id = log.store_event("a", &event()).await.unwrap();
            assert!(!log.owned_by(&id, &ana), "not sent yet");
            log.claim(&id, &ana);
            let bob = Owner {
                token: [2; 32],
                session: Some("s1".into()),
            };
            // A later claim (a reply that somehow carried it again) does not take it over.
            log.claim(&id, &Arc::new(bob.clone()));
            assert!(log.owned_by(&id, &ana));
            assert!(!log.owned_by(&id, &bob));
            let ana_elsewhere = Owner {
                token: [1; 32],
                session: None,
            };
            assert!(!log.owned_by(&id, &ana_elsewhere));
            assert!(!log.owned_by("unknown", &ana));
        });
    }

    #[test]
    fn ids_are_found_however_the_stream_is_cut() {
        let text = format!(
            "data: {}\nid: abc123\nretry: 3000\n\ndata: x\nid:def\r\n\n",
            "y".repeat(2000)
        );
        for cut in [1, 3, 7, 64, 4096] {
            let mut scanner = IdScanner::default();
            let mut ids = Vec::new();
            for chunk in text.as_bytes().chunks(cut) {
                scanner.feed(chunk, |id| ids.push(id.to_string()));
            }
            assert_eq!(ids, vec!["abc123", "def"], "chunks of {cut}");
        }
    }

    #[test]
    fn keeps_at_most_its_bound_of_events() {
        block_on(keeps_its_bound());
    }

    async fn keeps_its_bound() {
        let log = ReplayLog::default();
        let first = log.store_event("s", &event()).await.unwrap();
        for _ in 0..MAX_EVENTS {
            log.store_event("s", &event()).await.unwrap();
        }
        assert_eq!(log.inner.lock().events.len(), MAX_EVENTS);
        assert!(log.replay_events_after(&first).await.is_err());
    }
}
