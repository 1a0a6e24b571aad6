//! The registry's one list (`operations!`, one line per operation) and what it generates:
//! [`Operation`], [`Operation::ALL`], every per-operation property of [`Operation`] (read from
//! each operation's [`Operate`] implementation), the [`Request`] and [`Answer`] enums,
//! [`Request::parse`], both JSON schemas, and the runs behind [`crate::Memory::call`] and
//! [`crate::Memory::call_told`]. No `match` over the operations is written by hand.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::operate::Operate;
// Every operation's module, by the name the list gives it (`mod <name>;` beside the others).
#[allow(clippy::wildcard_imports)]
use super::*;
use crate::error::Result;
use crate::invalid::InvalidInput;
use crate::memory::Memory;
use crate::vocabulary::{self, Door};

/// `fields` as operation `name`'s request type.
fn typed<T: DeserializeOwned>(name: &str, fields: Value) -> Result<T, InvalidInput> {
    serde_json::from_value(fields).map_err(|e| InvalidInput::Field {
        field: "request",
        reason: format!("{name}: {e}"),
    })
}

/// The JSON schema (draft 2020-12, as MCP asks) of the fields `T` deserialises from.
fn request_schema_of<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    schema.to_value()
}

/// The schema of what `T` serialises as, its root an object (as MCP asks of an output schema).
fn answer_schema_of<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.entry("type").or_insert_with(|| Value::from("object"));
    }
    value
}

/// Generates the registry from its list: `Variant => module::Type { Request => Answer }`, each
/// line with the doc of its [`Operation`] variant, in the order the doors list them. The
/// request and answer types are named in the list so that the enums show them; the compiler
/// checks that they are the ones the operation's [`Operate`] implementation takes and returns.
macro_rules! operations {
    ($($(#[doc = $doc:literal])* $variant:ident => $op:ty { $request:ty => $answer:ty },)*) => {
        /// Every operation, in the order the doors list them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation {
            $($(#[doc = $doc])* $variant,)*
        }

        /// One operation's request, typed: what every door parses before the engine runs it.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Request {
            $(
                #[doc = concat!("[`Operation::", stringify!($variant), "`].")]
                $variant($request),
            )*
        }

        /// An operation's answer, typed. It serialises as the inner value alone (no tag): the
        /// operation asked says which it is.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Answer {
            $(
                #[doc = concat!("[`Operation::", stringify!($variant), "`].")]
                $variant($answer),
            )*
        }

        impl Operation {
            /// Every operation, in the order the doors list them.
            pub const ALL: [Operation; [$(stringify!($variant)),*].len()] =
                [$(Operation::$variant),*];

            /// The operation's name on every door (MCP's tool, the CLI's JSON call, C's and
            /// the bindings' `call`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Operation::$variant => <$op as Operate>::NAME,)*
                }
            }

            /// What it does, written for a model choosing a tool and a person reading
            /// `--help`.
            pub fn doc(self) -> &'static str {
                match self {
                    $(Operation::$variant => <$op as Operate>::DOC,)*
                }
            }

            /// True when its request names the scope (user, agent, session) the caller acts
            /// in ([`Operate::SCOPED`]).
            pub fn scoped(self) -> bool {
                match self {
                    $(Operation::$variant => <$op as Operate>::SCOPED,)*
                }
            }

            /// True when running it twice is running it once ([`Operate::READS_ONLY`]).
            pub fn reads_only(self) -> bool {
                match self {
                    $(Operation::$variant => <$op as Operate>::READS_ONLY,)*
                }
            }

            /// Whether it is on `door`: `None` when it is, or the reason it is not.
            pub fn absent_from(self, door: Door) -> Option<&'static str> {
                match self {
                    $(Operation::$variant => <$op as Operate>::absent_from(door),)*
                }
            }

            /// The JSON schema of its request's fields (what MCP lists as the tool's input
            /// schema).
            pub fn request_schema(self) -> Value {
                match self {
                    $(Operation::$variant => request_schema_of::<$request>(),)*
                }
            }

            /// The JSON schema of its answer, as every door returns it.
            pub fn answer_schema(self) -> Value {
                match self {
                    $(Operation::$variant => answer_schema_of::<$answer>(),)*
                }
            }
        }

        impl Request {
            /// Operation `name`'s request from its JSON fields (`null` is no fields), as every
            /// door parses it: unknown fields, wrong types and unknown operations are refused.
            ///
            /// # Errors
            /// [`InvalidInput`]: an unknown operation, or fields its request does not take.
            pub fn parse(name: &str, fields: Value) -> Result<Request, InvalidInput> {
                let op = Operation::named(name)?;
                let fields = if fields.is_null() {
                    Value::Object(serde_json::Map::new())
                } else {
                    fields
                };
                Ok(match op {
                    $(Operation::$variant => Request::$variant(typed(op.name(), fields)?),)*
                })
            }

            /// The operation it asks for.
            pub fn operation(&self) -> Operation {
                match self {
                    $(Request::$variant(_) => Operation::$variant,)*
                }
            }

            /// Its fields as JSON, as [`Request::parse`] reads them back (what a door sends
            /// to another process: the CLI to the one serving the store).
            pub fn fields(&self) -> Value {
                // Every request is plain data (no map with non-string keys).
                match self {
                    $(Request::$variant(r) => serde_json::to_value(r).unwrap_or(Value::Null),)*
                }
            }
        }

        /// Runs one operation of the registry on `memory` ([`crate::Memory::call`]).
        pub(super) fn run(memory: &Memory, request: Request) -> Result<Answer> {
            Ok(match request {
                $(Request::$variant(r) => Answer::$variant(<$op as Operate>::run(memory, r)?),)*
            })
        }

        /// Runs one operation and writes its answer as text for a model too
        /// ([`crate::Memory::call_told`]).
        pub(super) fn run_told(memory: &Memory, request: Request) -> Result<Told> {
            Ok(match request {
                $(Request::$variant(r) => {
                    let answer = <$op as Operate>::run(memory, r.clone())?;
                    Told {
                        text: <$op as Operate>::text(&r, &answer),
                        answer: Answer::$variant(answer),
                    }
                })*
            })
        }
    };
}

operations! {
    /// Store one memory.
    Remember => remember::Remember {
        vocabulary::RememberRequest => crate::remember::dedup::Remembered
    },
    /// A new version of a memory, or new metadata.
    Update => update::Update { vocabulary::UpdateRequest => update::Updated },
    /// The turns of a chat session.
    RememberConversation => remember_conversation::RememberConversation {
        vocabulary::ConversationRequest => crate::conversation::ConversationReport
    },
    /// The memories most related to a query.
    Recall => recall::Recall { vocabulary::RecallRequest => recall::Recalled },
    /// A context under a token budget.
    Context => context::Context { vocabulary::ContextParams => crate::context::Context },
    /// How much a memory helped.
    Feedback => feedback::Feedback {
        vocabulary::FeedbackRequest => crate::retrieve::FeedbackState
    },
    /// A finished task and its reflection.
    RecordTask => record_task::RecordTask { crate::agent::Task => crate::agent::TaskIds },
    /// An event about a subject.
    Observe => observe::Observe { vocabulary::ObserveRequest => observe::Observed },
    /// One memory by id.
    Get => get::Get { vocabulary::IdRequest => Box<crate::item::MemoryItem> },
    /// The memories passing a filter, a page at a time.
    List => list::List { vocabulary::ListRequest => list::Listed },
    /// One memory, or a whole scope, erased.
    Forget => forget::Forget { vocabulary::ForgetRequest => forget::ForgetAnswer },
    /// A memory's retention and when it will move on.
    ExplainDecay => explain_decay::ExplainDecay {
        vocabulary::IdRequest => Box<crate::forget::DecayReport>
    },
    /// Counts of the store.
    Stats => stats::Stats { vocabulary::NoFields => Box<crate::memory::Stats> },
    /// Demote and delete what faded.
    Sweep => sweep::Sweep { crate::item::Scope => crate::forget::SweepReport },
    /// Write the store (or part of it) to a file.
    Export => export::Export { vocabulary::ExportRequest => vocabulary::Exported },
    /// Read an export into the store.
    Import => import::Import { vocabulary::ImportRequest => crate::transfer::ImportReport },
    /// Push this device's changes to a remote and pull the other devices'.
    Sync => sync::Sync { vocabulary::SyncRequest => vocabulary::Synced },
}

impl Operation {
    /// The operation named `name`.
    ///
    /// # Errors
    /// [`InvalidInput::Field`] naming the operations there are.
    pub fn named(name: &str) -> Result<Operation, InvalidInput> {
        Operation::ALL
            .into_iter()
            .find(|op| op.name() == name)
            .ok_or_else(|| InvalidInput::Field {
                field: "operation",
                reason: format!(
                    "`{name}` is none (the operations: {})",
                    Operation::ALL.map(Operation::name).join(", ")
                ),
            })
    }

    /// True when it is on `door`.
    pub fn on(self, door: Door) -> bool {
        self.absent_from(door).is_none()
    }
}

impl Answer {
    /// The answer as JSON, the value every door returns (or converts to its own objects).
    pub fn to_json(&self) -> Value {
        // Every answer is plain data (no map with non-string keys, no failing serialiser).
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// An operation's answer and the same answer as text for a model ([`crate::Memory::call_told`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Told {
    /// The answer, typed.
    pub answer: Answer,
    /// The answer as text for a model (what MCP sends as the tool's text content).
    pub text: String,
}
