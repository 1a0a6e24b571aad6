//! The change stream's columns: [`schema`], rows of changes into a record batch ([`batch`]) and
//! back into memories ([`read_batch`]). Arrow does the format; this file only says which field
//! goes in which column.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, FixedSizeListBuilder, Float32Builder, Float64Builder, Int64Builder,
    ListBuilder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

use crate::item::{Kind, MemoryId, MemoryItem, Outcome, Source, Tier, Triple};
use crate::store::Change;

/// A decoded upsert row: the memory and its vector.
pub(crate) type Row = (MemoryItem, Vec<f32>);

/// The file's schema for vectors of `dim`, with `metadata`.
pub(crate) fn schema(dim: usize, metadata: HashMap<String, String>) -> Schema {
    let text = |name: &str, nullable| Field::new(name, DataType::Utf8, nullable);
    let list = |name: &str| {
        Field::new(
            name,
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        )
    };
    Schema::new(vec![
        Field::new("id", DataType::UInt64, false),
        text("op", false),
        Field::new("seq", DataType::UInt64, false),
        text("kind", true),
        text("text", true),
        text("concise", true),
        text("brief", true),
        text("namespace", true),
        text("user", true),
        text("agent", true),
        text("session", true),
        list("tags"),
        text("subject", true),
        text("triple_head", true),
        text("triple_relation", true),
        text("triple_tail", true),
        text("sources", true),
        Field::new("created", DataType::Int64, true),
        Field::new("updated", DataType::Int64, true),
        Field::new("accessed", DataType::Int64, true),
        Field::new("valid_from", DataType::Int64, true),
        Field::new("valid_until", DataType::Int64, true),
        Field::new("importance", DataType::Float32, true),
        text("outcome", true),
        Field::new("count", DataType::UInt32, true),
        Field::new("pinned", DataType::Boolean, true),
        Field::new("supersedes", DataType::UInt64, true),
        Field::new("superseded_by", DataType::UInt64, true),
        text("tier", true),
        Field::new("strength", DataType::Float64, true),
        Field::new("decay_anchor", DataType::Int64, true),
        Field::new("reinforced", DataType::UInt32, true),
        Field::new("demote_at", DataType::Int64, true),
        Field::new("forget_at", DataType::Int64, true),
        text("feedback", true),
        Field::new(
            "vector",
            DataType::FixedSizeList(
                Arc::new(Field::new("item", DataType::Float32, false)),
                dim as i32,
            ),
            true,
        ),
    ])
    .with_metadata(metadata)
}

/// When a memory will be demoted and forgotten if unused (none when forgetting is off).
pub(crate) type Deadlines<'a> = &'a dyn Fn(&MemoryItem) -> (Option<i64>, Option<i64>);

/// One record batch of `rows`.
pub(crate) fn batch(
    schema: &Arc<Schema>,
    dim: usize,
    rows: &[Change],
    deadlines: Deadlines<'_>,
) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let n = rows.len();
    let mut id = UInt64Builder::with_capacity(n);
    let mut op = StringBuilder::new();
    let mut seq = UInt64Builder::with_capacity(n);
    let mut s: Vec<StringBuilder> = (0..16).map(|_| StringBuilder::new()).collect();
    let mut tags = ListBuilder::new(StringBuilder::new());
    let mut times: Vec<Int64Builder> = (0..8).map(|_| Int64Builder::with_capacity(n)).collect();
    let mut importance = Float32Builder::with_capacity(n);
    let mut counts: Vec<UInt32Builder> = (0..2).map(|_| UInt32Builder::with_capacity(n)).collect();
    let mut pinned = BooleanBuilder::with_capacity(n);
    let mut links: Vec<UInt64Builder> = (0..2).map(|_| UInt64Builder::with_capacity(n)).collect();
    let mut strength = Float64Builder::with_capacity(n);
    let mut vector = FixedSizeListBuilder::new(Float32Builder::with_capacity(n * dim), dim as i32)
        .with_field(Arc::new(Field::new("item", DataType::Float32, false)));
    // String columns, in schema order: kind, text, concise, brief, namespace, user, agent,
    // session, subject, the triple's three, sources, outcome, tier, feedback.
    for row in rows {
        match row {
            Change::Delete { seq: at, id: gone } => {
                id.append_value(gone.get());
                op.append_value("delete");
                seq.append_value(*at);
                s.iter_mut().for_each(|b| b.append_null());
                tags.append(true);
                times.iter_mut().for_each(|b| b.append_null());
                importance.append_null();
                counts.iter_mut().for_each(|b| b.append_null());
                pinned.append_null();
                links.iter_mut().for_each(|b| b.append_null());
                strength.append_null();
                for _ in 0..dim {
                    vector.values().append_value(0.0);
                }
                vector.append(false);
            }
            Change::Upsert {
                seq: at,
                item,
                vector: v,
                feedback,
            } => {
                id.append_value(item.id.get());
                op.append_value("upsert");
                seq.append_value(*at);
                let triple = item.triple.as_ref();
                let sources = serde_json::to_string(&item.sources).unwrap_or_default();
                let strings: [Option<&str>; 16] = [
                    Some(item.kind.name()),
                    Some(&item.text),
                    item.concise.as_deref(),
                    item.brief.as_deref(),
                    Some(&item.namespace),
                    item.user.as_deref(),
                    item.agent.as_deref(),
                    item.session.as_deref(),
                    item.subject.as_deref(),
                    triple.map(|t| t.head.as_str()),
                    triple.map(|t| t.relation.as_str()),
                    triple.map(|t| t.tail.as_str()),
                    Some(&sources),
                    item.outcome.map(outcome_name),
                    Some(tier_name(item.tier)),
                    feedback.as_deref(),
                ];
                for (b, v) in s.iter_mut().zip(strings) {
                    b.append_option(v);
                }
                for t in &item.tags {
                    tags.values().append_value(t);
                }
                tags.append(true);
                let (demote, forget) = deadlines(item);
                for (b, v) in times.iter_mut().zip([
                    Some(item.created),
                    Some(item.updated),
                    Some(item.accessed),
                    Some(item.decay_anchor),
                    demote,
                    forget,
                    Some(item.valid_from),
                    item.valid_until,
                ]) {
                    b.append_option(v);
                }
                importance.append_value(item.importance);
                counts[0].append_value(item.count);
                counts[1].append_value(item.reinforced);
                pinned.append_value(item.pinned);
                links[0].append_option(item.supersedes.map(MemoryId::get));
                links[1].append_option(item.superseded_by.map(MemoryId::get));
                strength.append_value(item.strength);
                vector.values().append_slice(v);
                vector.append(true);
            }
        }
    }
    let mut s = s.into_iter().map(|mut b| Arc::new(b.finish()) as ArrayRef);
    let mut next_s = || s.next().expect("16 string columns");
    let mut times = times
        .into_iter()
        .map(|mut b| Arc::new(b.finish()) as ArrayRef);
    let mut next_t = || times.next().expect("8 time columns");
    let mut counts = counts
        .into_iter()
        .map(|mut b| Arc::new(b.finish()) as ArrayRef);
    let mut links = links
        .into_iter()
        .map(|mut b| Arc::new(b.finish()) as ArrayRef);
    let kind = next_s();
    let text = next_s();
    let concise = next_s();
    let brief = next_s();
    let namespace = next_s();
    let user = next_s();
    let agent = next_s();
    let session = next_s();
    let subject = next_s();
    let head = next_s();
    let relation = next_s();
    let tail = next_s();
    let sources = next_s();
    let outcome = next_s();
    let tier = next_s();
    let feedback = next_s();
    let (created, updated, accessed, anchor, demote, forget) =
        (next_t(), next_t(), next_t(), next_t(), next_t(), next_t());
    let (valid_from, valid_until) = (next_t(), next_t());
    let count = counts.next().expect("count");
    let reinforced = counts.next().expect("reinforced");
    let supersedes = links.next().expect("supersedes");
    let superseded_by = links.next().expect("superseded_by");
    let columns: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(op.finish()),
        Arc::new(seq.finish()),
        kind,
        text,
        concise,
        brief,
        namespace,
        user,
        agent,
        session,
        Arc::new(tags.finish()),
        subject,
        head,
        relation,
        tail,
        sources,
        created,
        updated,
        accessed,
        valid_from,
        valid_until,
        Arc::new(importance.finish()),
        outcome,
        count,
        Arc::new(pinned.finish()),
        supersedes,
        superseded_by,
        tier,
        Arc::new(strength.finish()),
        anchor,
        reinforced,
        demote,
        forget,
        feedback,
        Arc::new(vector.finish()),
    ];
    RecordBatch::try_new(schema.clone(), columns)
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Success => "success",
        Outcome::Failure => "failure",
    }
}

fn tier_name(t: Tier) -> &'static str {
    match t {
        Tier::Working => "working",
        Tier::LongTerm => "long_term",
    }
}

/// `batch` with its text columns as Arrow's `Utf8` and its tag lists as `List<Utf8>`, the
/// types [`read_batch`] reads: the `LargeUtf8` and `Utf8View` text that DuckDB, Polars and
/// pyarrow write by default (and large lists) are converted; other columns pass as they are.
pub(crate) fn normalize(batch: RecordBatch) -> Result<RecordBatch, String> {
    use arrow_array::StringArray;
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    let mut changed = false;
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let strings = |a: &ArrayRef| -> Option<StringArray> {
            match a.data_type() {
                DataType::LargeUtf8 => Some(a.as_string::<i64>().iter().collect()),
                DataType::Utf8View => Some(a.as_string_view().iter().collect()),
                _ => None,
            }
        };
        let converted: Option<ArrayRef> = match column.data_type() {
            DataType::LargeUtf8 | DataType::Utf8View => {
                strings(column).map(|a| Arc::new(a) as ArrayRef)
            }
            DataType::List(f) if f.data_type() == &DataType::Utf8 => None,
            DataType::List(_) | DataType::LargeList(_) => {
                let rows: Vec<Option<ArrayRef>> = match column.data_type() {
                    DataType::List(_) => column.as_list::<i32>().iter().collect(),
                    _ => column.as_list::<i64>().iter().collect(),
                };
                let mut b = ListBuilder::new(StringBuilder::new());
                for row in rows {
                    let Some(values) = row else {
                        b.append(false);
                        continue;
                    };
                    let values = match values.data_type() {
                        DataType::Utf8 => values.as_string::<i32>().clone(),
                        _ => strings(&values).ok_or_else(|| {
                            format!("column `{}` holds lists that are not text", field.name())
                        })?,
                    };
                    for v in values.iter() {
                        b.values().append_option(v);
                    }
                    b.append(true);
                }
                Some(Arc::new(b.finish()))
            }
            _ => None,
        };
        match converted {
            Some(c) => {
                changed = true;
                fields.push(Field::new(
                    field.name(),
                    c.data_type().clone(),
                    field.is_nullable(),
                ));
                columns.push(c);
            }
            None => {
                fields.push(field.as_ref().clone());
                columns.push(column.clone());
            }
        }
    }
    if !changed {
        return Ok(batch);
    }
    let schema = Schema::new(fields).with_metadata(schema.metadata().clone());
    RecordBatch::try_new(Arc::new(schema), columns).map_err(|e| e.to_string())
}

/// The memories of a batch's upsert rows, checked column by column; `Err` names what is wrong.
/// A delete row is an error (an import rebuilds a store from a full export).
pub(crate) fn read_batch(batch: &RecordBatch, dim: usize) -> Result<Vec<Row>, String> {
    let col = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| format!("missing column `{name}`"))
    };
    let strings = |name: &str| -> Result<_, String> {
        col(name)?
            .as_string_opt::<i32>()
            .ok_or_else(|| format!("column `{name}` is not text"))
    };
    let prim_u64 = |name: &str| -> Result<_, String> {
        col(name)?
            .as_primitive_opt::<UInt64Type>()
            .ok_or_else(|| format!("column `{name}` is not uint64"))
    };
    let prim_i64 = |name: &str| -> Result<_, String> {
        col(name)?
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| format!("column `{name}` is not int64"))
    };
    let prim_u32 = |name: &str| -> Result<_, String> {
        col(name)?
            .as_primitive_opt::<UInt32Type>()
            .ok_or_else(|| format!("column `{name}` is not uint32"))
    };
    let id = prim_u64("id")?;
    let op = strings("op")?;
    let kind = strings("kind")?;
    let text = strings("text")?;
    let concise = strings("concise")?;
    let brief = strings("brief")?;
    let namespace = strings("namespace")?;
    // Scope and validity columns came later: a file written before has none (its memories
    // belong to no scope and are valid from their creation on).
    let present = |name: &str| batch.column_by_name(name).is_some();
    let (user, agent, session) = (
        present("user").then(|| strings("user")).transpose()?,
        present("agent").then(|| strings("agent")).transpose()?,
        present("session").then(|| strings("session")).transpose()?,
    );
    let (valid_from, valid_until) = (
        present("valid_from")
            .then(|| prim_i64("valid_from"))
            .transpose()?,
        present("valid_until")
            .then(|| prim_i64("valid_until"))
            .transpose()?,
    );
    let subject = strings("subject")?;
    let head = strings("triple_head")?;
    let relation = strings("triple_relation")?;
    let tail = strings("triple_tail")?;
    let sources = strings("sources")?;
    let outcome = strings("outcome")?;
    let tier = strings("tier")?;
    let tags = col("tags")?
        .as_list_opt::<i32>()
        .ok_or("column `tags` is not a list")?;
    let (created, updated, accessed, anchor) = (
        prim_i64("created")?,
        prim_i64("updated")?,
        prim_i64("accessed")?,
        prim_i64("decay_anchor")?,
    );
    let importance = col("importance")?
        .as_primitive_opt::<Float32Type>()
        .ok_or("column `importance` is not float32")?;
    let strength = col("strength")?
        .as_primitive_opt::<Float64Type>()
        .ok_or("column `strength` is not float64")?;
    let count = prim_u32("count")?;
    let reinforced = prim_u32("reinforced")?;
    let pinned = col("pinned")?
        .as_boolean_opt()
        .ok_or("column `pinned` is not boolean")?;
    let supersedes = prim_u64("supersedes")?;
    let superseded_by = prim_u64("superseded_by")?;
    let vectors = col("vector")?
        .as_fixed_size_list_opt()
        .filter(|v| v.value_length() as usize == dim)
        .ok_or_else(|| format!("column `vector` is not a fixed-size list of {dim} floats"))?;
    let mut out = Vec::with_capacity(batch.num_rows());
    for r in 0..batch.num_rows() {
        let at = |what: &str| format!("row {r}: {what}");
        let need = |a: &dyn Array, what: &str| {
            if a.is_null(r) {
                Err(at(&format!("`{what}` is empty")))
            } else {
                Ok(())
            }
        };
        if op.is_null(r) || op.value(r) != "upsert" {
            return Err(at("only upsert rows can be imported (a delta's deletes are for mirrors; import a full export)"));
        }
        for (a, name) in [
            (kind as &dyn Array, "kind"),
            (text, "text"),
            (namespace, "namespace"),
            (tier, "tier"),
            (created, "created"),
            (updated, "updated"),
            (accessed, "accessed"),
            (anchor, "decay_anchor"),
            (importance, "importance"),
            (strength, "strength"),
            (count, "count"),
            (reinforced, "reinforced"),
            (pinned, "pinned"),
            (vectors, "vector"),
        ] {
            need(a, name)?;
        }
        let opt = |a: &arrow_array::StringArray| (!a.is_null(r)).then(|| a.value(r).to_string());
        let triple = match (opt(head), opt(relation), opt(tail)) {
            (Some(head), Some(relation), Some(tail)) => Some(Triple {
                head,
                relation,
                tail,
            }),
            (None, None, None) => None,
            _ => return Err(at("a triple needs head, relation and tail")),
        };
        let sources: Vec<Source> = match opt(sources) {
            Some(s) => serde_json::from_str(&s).map_err(|e| at(&format!("sources: {e}")))?,
            None => Vec::new(),
        };
        let tag_list = tags.value(r);
        let tag_values = tag_list
            .as_string_opt::<i32>()
            .ok_or_else(|| at("tags are not text"))?;
        let item = MemoryItem {
            id: MemoryId::new(id.value(r)),
            kind: Kind::parse(kind.value(r)).ok_or_else(|| at("unknown kind"))?,
            text: text.value(r).to_string(),
            concise: opt(concise),
            brief: opt(brief),
            triple,
            subject: opt(subject),
            sources,
            namespace: namespace.value(r).to_string(),
            tags: tag_values.iter().flatten().map(str::to_string).collect(),
            created: created.value(r),
            updated: updated.value(r),
            accessed: accessed.value(r),
            importance: importance.value(r),
            outcome: match opt(outcome).as_deref() {
                None => None,
                Some("success") => Some(Outcome::Success),
                Some("failure") => Some(Outcome::Failure),
                Some(_) => return Err(at("unknown outcome")),
            },
            count: count.value(r),
            pinned: pinned.value(r),
            supersedes: (!supersedes.is_null(r)).then(|| MemoryId::new(supersedes.value(r))),
            superseded_by: (!superseded_by.is_null(r))
                .then(|| MemoryId::new(superseded_by.value(r))),
            tier: match tier.value(r) {
                "working" => Tier::Working,
                "long_term" => Tier::LongTerm,
                _ => return Err(at("unknown tier")),
            },
            strength: strength.value(r),
            decay_anchor: anchor.value(r),
            reinforced: reinforced.value(r),
            user: user.and_then(opt),
            agent: agent.and_then(opt),
            session: session.and_then(opt),
            valid_from: valid_from
                .filter(|c| !c.is_null(r))
                .map_or(created.value(r), |c| c.value(r)),
            valid_until: valid_until.filter(|c| !c.is_null(r)).map(|c| c.value(r)),
        };
        let row = vectors.value(r);
        let vector = row
            .as_primitive_opt::<Float32Type>()
            .ok_or_else(|| at("the vector does not hold float32"))?
            .values()
            .to_vec();
        out.push((item, vector));
    }
    Ok(out)
}
