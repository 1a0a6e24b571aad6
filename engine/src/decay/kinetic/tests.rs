//! Property tests of the kinetic queue against the brute-force oracle.

use super::*;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, i32, i32),
    Remove(u64),
    SetLine(u64, i32, i32),
    Advance(u32),
    Pop,
    AtMost(i32),
}

/// Dyadic values (multiples of 1/64, small numerators): every evaluation and comparison is
/// exact in f64, so the queue must agree with the oracle exactly.
fn dy(x: i32) -> f64 {
    f64::from(x) / 64.0
}

fn op(ids: u64, slopes: i32) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..ids, -512i32..512, -slopes..=0).prop_map(|(i, v, s)| Op::Insert(i, v, s)),
        1 => (0..ids).prop_map(Op::Remove),
        2 => (0..ids, -512i32..512, -slopes..=0).prop_map(|(i, v, s)| Op::SetLine(i, v, s)),
        3 => (0u32..96).prop_map(Op::Advance),
        1 => Just(Op::Pop),
        1 => (-1024i32..512).prop_map(Op::AtMost),
    ]
}

fn sorted(mut v: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    v.sort_by_key(|a| a.0);
    v
}

fn run(ops: &[Op]) {
    let mut q = KineticQueue::new(0.0);
    let mut o = BruteForceQueue::new(0.0);
    let mut now = 0.0;
    for op in ops {
        match *op {
            Op::Insert(id, v, s) => {
                let line = Line {
                    v0: dy(v),
                    slope: dy(s),
                    t0: now,
                };
                let r = q.insert(id, line);
                if o.items.contains_key(&id) {
                    assert_eq!(r, Err(KineticError::Duplicate(id)));
                } else {
                    r.unwrap();
                    o.set_line(id, line);
                }
            }
            Op::Remove(id) => assert_eq!(
                q.remove(id).map(|l| l.eval(now)),
                o.remove(id).map(|l| l.eval(now))
            ),
            Op::SetLine(id, v, s) => {
                let line = Line {
                    v0: dy(v),
                    slope: dy(s),
                    t0: now,
                };
                let had = o.items.insert(id, line).map(|l| l.eval(now));
                assert_eq!(q.set_line(id, line).unwrap().map(|l| l.eval(now)), had);
            }
            Op::Advance(dt) => {
                now += dy(dt as i32);
                q.advance(now).unwrap();
                o.advance(now).unwrap();
            }
            Op::Pop => assert_eq!(q.pop_min(), o.pop_min()),
            Op::AtMost(th) => assert_eq!(sorted(q.at_most(dy(th))), sorted(o.at_most(dy(th)))),
        }
        assert_eq!(q.peek_min(), o.peek_min(), "after {op:?} at {now}");
        assert_eq!(q.len(), o.len());
        q.check_invariants();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    /// 96 sequences × up to 160 operations ≈ 15k operations against the oracle.
    #[test]
    fn agrees_with_brute_force(ops in proptest::collection::vec(op(40, 64), 1..160)) {
        run(&ops);
    }

    /// All slopes equal (no crossings at all) and many identical lines.
    #[test]
    fn equal_slopes_and_identical_lines(ops in proptest::collection::vec(op(12, 0), 1..160)) {
        run(&ops);
    }

    /// Few distinct slopes, many items: many ties and simultaneous crossings.
    #[test]
    fn few_slopes_many_events(ops in proptest::collection::vec(op(200, 2), 1..200)) {
        run(&ops);
    }
}

#[test]
fn twenty_thousand_random_operations_with_growth_and_shrink() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let ops: Vec<Op> = (0..20_000)
        .map(|i| {
            // Grow for the first half, shrink in the second: crosses powers of two both ways.
            let insert_bias = if i < 10_000 { 6 } else { 1 };
            match rng.gen_range(0..10 + insert_bias) {
                0..=1 => Op::Remove(rng.gen_range(0..2000)),
                2..=3 => Op::SetLine(
                    rng.gen_range(0..2000),
                    rng.gen_range(-512..512),
                    rng.gen_range(-64..=0),
                ),
                4..=5 => Op::Advance(rng.gen_range(0..32)),
                6..=7 => Op::Pop,
                8 => Op::AtMost(rng.gen_range(-2048..0)),
                _ => Op::Insert(
                    rng.gen_range(0..2000),
                    rng.gen_range(-512..512),
                    rng.gen_range(-64..=0),
                ),
            }
        })
        .collect();
    run(&ops);
}

#[test]
fn float_lines_at_epoch_scale_times_and_huge_jumps() {
    // Ebbinghaus keys in log space with times in seconds since 1970: no exactness, so
    // compare the minimum's value within a relative epsilon, and never loop.
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let t0 = 1.7e9;
    let mut q = KineticQueue::new(t0);
    let mut o = BruteForceQueue::new(t0);
    let mut now = t0;
    for i in 0..5_000u64 {
        let s: f64 = rng.gen_range(60.0..1e7);
        let w: f64 = rng.gen_range(0.01..1.0);
        let line = Line {
            v0: w.ln(),
            slope: -1.0 / s,
            t0: now,
        };
        q.set_line(i % 700, line).unwrap();
        o.set_line(i % 700, line);
        now += if i % 1000 == 999 {
            1e8
        } else {
            rng.gen_range(0.0..100.0)
        };
        q.advance(now).unwrap();
        o.advance(now).unwrap();
        let (a, b) = (q.peek_min().unwrap().1, o.peek_min().unwrap().1);
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} vs {b}");
    }
    assert!(matches!(
        q.advance(now - 1.0),
        Err(KineticError::TimeWentBack { .. })
    ));
    assert!(matches!(
        q.insert(
            1,
            Line {
                v0: f64::NAN,
                slope: 0.0,
                t0: 0.0
            }
        ),
        Err(KineticError::NotFinite(1))
    ));
}
