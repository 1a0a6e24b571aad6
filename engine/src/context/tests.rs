use super::*;

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

fn candidate(id: MemoryId, key: bool, start: Precision, n: usize) -> Candidate {
    let text = |len: usize| vec!["w"; len].join(" ");
    Candidate {
        id,
        score: 1.0 / id.get() as f32,
        key,
        start,
        texts: [text(n / 4 + 1), text(n / 2 + 1), text(n)],
    }
}

#[test]
fn everything_fits_at_the_starting_precisions_when_the_budget_allows() {
    let cands = [
        candidate(MemoryId::new(1), true, Precision::Original, 20),
        candidate(MemoryId::new(2), false, Precision::Brief, 20),
    ];
    let ctx = assemble(&cands, 1000, &words);
    assert_eq!(ctx.blocks.len(), 2);
    assert_eq!(ctx.blocks[0].precision, Precision::Original);
    assert_eq!(ctx.blocks[0].label, KEY_REFERENCE);
    assert_eq!(ctx.blocks[1].precision, Precision::Brief);
    assert_eq!(ctx.blocks[1].label, GENERAL_REFERENCE);
    assert_eq!(ctx.tokens, words(&ctx.text));
    assert!(ctx.text.starts_with("Key Reference:\n[1] w"));
}

#[test]
fn the_least_relevant_loses_precision_first_and_is_dropped_last() {
    let cands = [
        candidate(MemoryId::new(1), true, Precision::Original, 40),
        candidate(MemoryId::new(2), true, Precision::Original, 40),
        candidate(MemoryId::new(3), false, Precision::Brief, 40),
    ];
    // Everything at start: 2 headers (4 words) + 3 ids + 40 + 40 + 11 = 98.
    let ctx = assemble(&cands, 80, &words);
    assert!(ctx.tokens <= 80);
    assert_eq!(ctx.blocks[0].precision, Precision::Original);
    assert_eq!(ctx.blocks[1].precision, Precision::Concise);
    // A budget too small for anything but the first memory at brief.
    let ctx = assemble(&cands, 15, &words);
    assert_eq!(ctx.blocks.len(), 1);
    assert_eq!(ctx.blocks[0].id, MemoryId::new(1));
    assert_eq!(ctx.dropped, [MemoryId::new(2), MemoryId::new(3)]);
    let ctx = assemble(&cands, 0, &words);
    assert!(ctx.blocks.is_empty() && ctx.text.is_empty() && ctx.tokens == 0);
}

#[test]
fn shifted_precision_is_clamped() {
    assert_eq!(Precision::Brief.shifted(1), Precision::Concise);
    assert_eq!(Precision::Brief.shifted(-2), Precision::Brief);
    assert_eq!(Precision::Concise.shifted(2), Precision::Original);
}
