//! The events `--http` has sent, kept a short while so that a client whose SSE stream broke can
//! reconnect with `Last-Event-ID` and receive what it missed, the call's result included, even
//! when the result was sent while it was away (Streamable HTTP's resumption).
//!
//! rmcp's own per-session cache forgets a call's stream the moment its result is sent; this log,
//! handed to rmcp as its `EventStore`, keeps every stream's events in memory, bounded in count,
//! bytes and age: the oldest go first. Event ids are 128 random bits, so one client cannot name
//! (and replay) another's events; they are never written to disk.

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
        let later: Vec<ServerSseMessage> = log
            .events
            .iter()
            .skip(at + 1)
            .filter(|e| e.stream == stream)
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
        let a1 = log.store_event("a", &event()).await.unwrap();
        let b1 = log.store_event("b", &event()).await.unwrap();
        let a2 = log.store_event("a", &event()).await.unwrap();
        let a3 = log.store_event("a", &event()).await.unwrap();
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
