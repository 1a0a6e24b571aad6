//! The engine on the real default model (all-MiniLM-L6-v2, fetched by scripts/fetch-model.sh).

use memloop::{
    model::DocumentPooling, model::EncoderPrecision, Kind, Memory, MemoryFilter, NewMemory,
    Options, Query, RememberAction, Strategy,
};

#[test]
fn recall_with_minilm_finds_the_semantically_closest_memory() {
    let dir = crate::common::tempdir();
    let m = Memory::open(dir.path(), Options::default()).expect("default model is fetched");
    // A new store takes the preferred precision (int8 on a CPU with AVX2, else f32) and pools
    // a text's sentences.
    let model = DocumentPooling::Sentences
        .model_name(&EncoderPrecision::preferred().model_name("all-MiniLM-L6-v2"));
    assert!(
        m.admin()
            .fingerprint()
            .starts_with(&format!("{model}:53aa5117")),
        "{}",
        m.admin().fingerprint()
    );
    m.remember_batch(vec![
        NewMemory::new("The staging database password rotates every Monday."),
        NewMemory::new("Alice prefers tea over coffee in the morning."),
        NewMemory::new("The CI pipeline caches cargo builds between runs."),
    ])
    .unwrap();
    let hits = m
        .recall(&Query::new("What does Alice like to drink?").k(3))
        .unwrap();
    assert!(hits[0].item.text.starts_with("Alice"));
    let hits = m
        .recall(&Query::new("when do credentials change").k(1))
        .unwrap();
    assert!(hits[0].item.text.contains("password"));
    // A paraphrase is a near-duplicate for MiniLM and merges.
    let id = hits[0].item.id;
    let merged = m
        .remember(NewMemory::new(
            "The staging database password rotates every Monday!",
        ))
        .unwrap();
    assert_eq!(merged, id);
}

/// A new fact is never swallowed by the old one it resembles: with the default threshold, MiniLM
/// finds "… port 5433." a near-duplicate of "… port 5432.", and the new text becomes the current
/// version (the old kept as history); chunks that differ in a date, or only past the 256 tokens
/// the model reads, are both kept.
#[test]
fn a_changed_fact_supersedes_and_differing_chunks_stay_apart() {
    let dir = crate::common::tempdir();
    let m = Memory::open(dir.path(), Options::default()).expect("default model is fetched");
    let old = m
        .remember_explained(
            NewMemory::new("The staging database listens on port 5432.").kind(Kind::Fact),
        )
        .unwrap();
    assert_eq!(old.action, RememberAction::New);
    let new = m
        .remember_explained(
            NewMemory::new("The staging database listens on port 5433.").kind(Kind::Fact),
        )
        .unwrap();
    assert_eq!(
        new.action,
        RememberAction::Superseded { previous: old.id },
        "5433 is a new version of the fact, not merged into 5432"
    );
    let (o, n) = (
        m.get(old.id).unwrap().unwrap(),
        m.get(new.id).unwrap().unwrap(),
    );
    assert_eq!(n.text, "The staging database listens on port 5433.");
    assert_eq!(
        (o.superseded_by, n.supersedes),
        (Some(new.id), Some(old.id))
    );
    let hits = m
        .recall(&Query::new("Which port does the staging database listen on?").k(3))
        .unwrap();
    assert_eq!(hits[0].item.id, new.id, "recall finds the current value");
    assert!(hits.iter().all(|h| h.item.id != old.id));
    // Saying the current value again (any case or punctuation) merges into it.
    let again = m
        .remember_explained(
            NewMemory::new("the staging database listens on port 5433").kind(Kind::Fact),
        )
        .unwrap();
    assert_eq!((again.id, again.action), (new.id, RememberAction::Merged));

    let monday = m
        .remember_explained(NewMemory::new("The release review is on Monday."))
        .unwrap();
    let tuesday = m
        .remember_explained(NewMemory::new("The release review is on Tuesday."))
        .unwrap();
    assert_eq!(tuesday.action, RememberAction::New);
    assert_ne!(monday.id, tuesday.id);
    let head = "The quarterly report covers revenue, costs and hiring in every region. ".repeat(30);
    let a = m
        .remember(NewMemory::new(format!("{head}The total was 41 million.")))
        .unwrap();
    let b = m
        .remember(NewMemory::new(format!("{head}The total was 47 million.")))
        .unwrap();
    assert_ne!(
        a, b,
        "texts equal in their first 256 tokens are still different"
    );
    assert!(m.get(a).unwrap().unwrap().text.ends_with("41 million."));
    assert!(m.get(b).unwrap().unwrap().text.ends_with("47 million."));
}

/// A new store that names no precision takes the preferred one (int8 on a CPU with AVX2) and
/// sentence pooling; a store written in f32, whole, keeps both when reopened without a
/// choice, also with its manifest gone (a store from before manifests), so the new defaults
/// never lock an old store out.
#[test]
fn a_new_store_takes_the_preferred_precision_and_an_f32_store_keeps_f32() {
    let dir = crate::common::tempdir();
    let fresh = Memory::open(dir.path().join("new"), Options::default()).unwrap();
    let preferred = DocumentPooling::Sentences
        .model_name(&EncoderPrecision::preferred().model_name("all-MiniLM-L6-v2"));
    assert!(fresh
        .admin()
        .fingerprint()
        .starts_with(&format!("{preferred}:")));
    drop(fresh);
    let old = dir.path().join("f32");
    let f32_store = Options {
        precision: Some(EncoderPrecision::F32),
        pooling: Some(DocumentPooling::Whole),
        ..Options::default()
    };
    let m = Memory::open(&old, f32_store).unwrap();
    let id = m
        .remember(NewMemory::new("Alice prefers tea over coffee."))
        .unwrap();
    drop(m);
    for manifest_gone in [false, true] {
        if manifest_gone {
            std::fs::remove_file(old.join("manifest.json")).unwrap();
        }
        let m = Memory::open(&old, Options::default()).unwrap();
        assert!(
            m.admin().fingerprint().starts_with("all-MiniLM-L6-v2:"),
            "{}",
            m.admin().fingerprint()
        );
        let hits = m.recall(&Query::new("what does Alice drink").k(1)).unwrap();
        assert_eq!(hits[0].item.id, id);
    }
}

/// A store whose texts were pooled by sentences keeps that pooling when reopened, refuses a
/// caller who asks for whole-text vectors (the two are different spaces), and finds a memory
/// by one sentence of a long text.
#[test]
fn sentence_pooling_is_recorded_and_finds_a_memory_by_one_of_its_sentences() {
    let dir = crate::common::tempdir();
    let m = Memory::open(dir.path(), Options::default()).unwrap();
    let long = m
        .remember(NewMemory::new(
            "We spent the weekend repainting the kitchen and fixing the leaking tap. \
             The hardware store ran out of the blue paint, so we went with green. \
             My sister came over on Sunday with her twins and stayed for dinner. \
             I also finally booked the dentist appointment I had been putting off.",
        ))
        .unwrap();
    m.remember(NewMemory::new("The quarterly report is due on Friday."))
        .unwrap();
    let hits = m
        .recall(&Query::new("Have I booked a visit to the dentist yet?").k(1))
        .unwrap();
    assert_eq!(hits[0].item.id, long);
    drop(m);
    let m = Memory::open(dir.path(), Options::default()).unwrap();
    assert!(
        m.admin().fingerprint().contains("+sentences:"),
        "{}",
        m.admin().fingerprint()
    );
    drop(m);
    let whole = Options {
        pooling: Some(DocumentPooling::Whole),
        ..Options::default()
    };
    let err = Memory::open(dir.path(), whole).unwrap_err();
    assert!(matches!(err, memloop::Error::ModelMismatch { .. }), "{err}");
}

/// A new store keeps its memories' sentence vectors (format 2): the rerank strategy explains
/// a long memory's best sentence, closer to a question that paraphrases it than the whole
/// text's mean, and a memory of one sentence counts its own vector; the manifest says format
/// 2 and the check reads every sentence row.
#[test]
fn a_long_memory_is_judged_by_its_best_sentence() {
    let dir = crate::common::tempdir();
    let m = Memory::open(dir.path(), Options::default()).unwrap();
    let long = m
        .remember(NewMemory::new(
            "We spent the weekend repainting the kitchen and fixing the leaking tap. \
             The hardware store ran out of the blue paint, so we went with green. \
             By the way, I just set up a 20-gallon aquarium for my daughter's goldfish.",
        ))
        .unwrap();
    let one = m
        .remember(NewMemory::new("The quarterly report is due on Friday."))
        .unwrap();
    let hits = m
        .retrieve(
            &Query::new("How big is the fish tank I set up?").k(2),
            Strategy::RERANK,
        )
        .unwrap();
    assert_eq!(hits[0].item.id, long);
    let (sentence, pooled) = (
        hits[0].explain.sentence.unwrap(),
        hits[0].explain.vector.unwrap(),
    );
    assert!(sentence > pooled + 0.05, "{sentence} against {pooled}");
    let short = hits.iter().find(|h| h.item.id == one).unwrap();
    assert_eq!(short.explain.sentence, short.explain.vector);
    assert!(m.admin().check().unwrap().is_sound());
    drop(m);
    let manifest = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    assert!(manifest.contains("\"version\": 2"), "{manifest}");
}

/// The newest of two values of a fact ranks first for now, and the old one answers as of its
/// time, whatever the strategy: Paris (valid from 2020) then Berlin (from 2024), and ten
/// variants (numbers, names, places; facts, triples and plain chunks; with a date in the text
/// or none; the newer stored first or last).
#[test]
fn the_newest_value_of_a_fact_ranks_first_and_the_old_one_answers_for_its_time() {
    use memloop::time::parse_rfc3339;
    let at = |s: &str| parse_rfc3339(s).unwrap();
    struct Case {
        old: &'static str,
        new: &'static str,
        query: &'static str,
        kind: Kind,
        triple: Option<(&'static str, &'static str, &'static str, &'static str)>,
        newer_first: bool,
    }
    let case = |old, new, query| Case {
        old,
        new,
        query,
        kind: Kind::Chunk,
        triple: None,
        newer_first: false,
    };
    let cases = [
        case(
            "Alice lives in Paris",
            "Alice lives in Berlin",
            "where does Alice live?",
        ),
        Case {
            kind: Kind::Fact,
            ..case(
                "Bob has 3 cats",
                "Bob has 4 cats",
                "how many cats does Bob have?",
            )
        },
        case(
            "The team standup is at 9:30",
            "The team standup is at 10:15",
            "what time is the standup?",
        ),
        case(
            "Dana's manager is Priya Raman",
            "Dana's manager is Tomasz Lee",
            "who is Dana's manager?",
        ),
        Case {
            newer_first: true,
            ..case(
                "The staging database listens on port 5432",
                "The staging database listens on port 6543",
                "which port does the staging database use?",
            )
        },
        Case {
            kind: Kind::Fact,
            ..case(
                "Eve works at Globex as a designer",
                "Eve works at Initech as a designer",
                "where does Eve work?",
            )
        },
        case(
            "My favourite restaurant is the Thai place on Main Street",
            "My favourite restaurant is the ramen bar on Main Street",
            "what is my favourite restaurant?",
        ),
        case(
            "Frank drives a 2015 Honda Civic",
            "Frank drives a 2023 Tesla Model 3",
            "what car does Frank drive?",
        ),
        Case {
            newer_first: true,
            kind: Kind::Fact,
            ..case(
                "The rent for the flat is 1200 euros a month since 2020",
                "The rent for the flat is 1450 euros a month since 2024",
                "how much is the rent?",
            )
        },
        case(
            "Grace's phone number is 555-0101",
            "Grace's phone number is 555-0199",
            "what is Grace's phone number?",
        ),
        Case {
            kind: Kind::Triple,
            triple: Some(("Hank", "lives in", "Lisbon", "Madrid")),
            ..case(
                "Hank lives in Lisbon",
                "Hank lives in Madrid",
                "where does Hank live?",
            )
        },
    ];
    let (old_from, new_from) = (at("2020-01-01T00:00:00Z"), at("2024-01-01T00:00:00Z"));
    let strategies = [
        Strategy::Single,
        Strategy::Lexical,
        Strategy::RERANK,
        Strategy::Iterative {
            rounds: 2,
            per_round: 5,
        },
    ];
    for c in &cases {
        let dir = crate::common::tempdir();
        let m = Memory::open(dir.path(), Options::default()).expect("default model is fetched");
        let memory = |text: &str, from, tail: Option<&str>| {
            let mut n = NewMemory::new(text).kind(c.kind);
            if let (Some((head, relation, ..)), Some(tail)) = (c.triple, tail) {
                n = n.triple(head, relation, tail);
            }
            n.valid_from = Some(from);
            n
        };
        let old = memory(c.old, old_from, c.triple.map(|t| t.2));
        let new = memory(c.new, new_from, c.triple.map(|t| t.3));
        let (old_id, new_id) = if c.newer_first {
            let n = m.remember(new).unwrap();
            (m.remember(old).unwrap(), n)
        } else {
            (m.remember(old).unwrap(), m.remember(new).unwrap())
        };
        assert_ne!(old_id, new_id, "{}: both values are kept", c.old);
        // Other memories around them, so the ranking is not between two alone.
        m.remember_batch(vec![
            NewMemory::new("The quarterly report is due on the first Monday of April."),
            NewMemory::new("Lunch on Fridays is usually ramen from the place around the corner."),
            NewMemory::new("The deploy checklist lives in the operations wiki."),
        ])
        .unwrap();
        for strategy in strategies {
            let now = m.retrieve(&Query::new(c.query).k(1), strategy).unwrap();
            assert_eq!(
                now[0].item.id,
                new_id,
                "{} / {} ({}): now",
                c.old,
                c.new,
                strategy.name()
            );
            let then = MemoryFilter::default().as_of(at("2022-06-01T00:00:00Z"));
            let then = m
                .retrieve(&Query::new(c.query).k(1).filter(then), strategy)
                .unwrap();
            assert_eq!(
                then[0].item.id,
                old_id,
                "{} / {} ({}): as of 2022",
                c.old,
                c.new,
                strategy.name()
            );
        }
    }
}
