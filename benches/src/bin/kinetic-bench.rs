//! `kinetic-bench`: the kinetic queue beside a brute-force scan, in one run.
//!
//! ```text
//! cargo run --release -p memloop-benches --bin kinetic-bench -- --sizes 1000,10000,100000,1000000 --json
//! ```
//! Items are Ebbinghaus retentions in log space (`ln w − (t − t0)/S`, S from 1 hour to 100
//! days, times in seconds since 1970). After filling the queue with n items, a mixed workload
//! runs: 40% reinforcements (`set_line`: S grows, clock restarts), 20% pop-min + re-insert, 20%
//! peek, 20% advance by 0–60 s. Reported: operations/s, and per advance the nodes recomputed.
//! The brute-force queue runs the same workload (fewer operations at large n: each of its
//! queries scans everything) and its rate is reported beside as a ratio.

use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use memloop::forget::kinetic::{BruteForceQueue, KineticQueue, Line};
use rand::{Rng, SeedableRng};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "kinetic queue throughput beside brute force")]
struct Args {
    /// Queue sizes.
    #[arg(
        long,
        default_value = "1000,10000,100000,1000000",
        value_delimiter = ','
    )]
    sizes: Vec<usize>,
    /// Mixed operations timed for the kinetic queue.
    #[arg(long, default_value_t = 1_000_000)]
    ops: usize,
    /// Budget of item visits for the brute-force run (operations = budget / n).
    #[arg(long, default_value_t = 200_000_000)]
    brute_budget: usize,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
}

const T0: f64 = 1.7e9;

fn line(rng: &mut impl Rng, now: f64) -> Line {
    let s: f64 = rng.gen_range(3600.0..8.64e6);
    Line {
        v0: 0.0,
        slope: -1.0 / s,
        t0: now - rng.gen_range(0.0..s),
    }
}

#[derive(Clone, Copy)]
enum Op {
    Reinforce(u64, f64),
    PopReinsert,
    Peek,
    Advance(f64),
}

fn workload(n: usize, ops: usize, seed: u64) -> Vec<Op> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..ops)
        .map(|_| match rng.gen_range(0..10) {
            0..=3 => Op::Reinforce(rng.gen_range(0..n as u64), rng.gen_range(1.5..3.0)),
            4..=5 => Op::PopReinsert,
            6..=7 => Op::Peek,
            _ => Op::Advance(rng.gen_range(0.0..60.0)),
        })
        .collect()
}

trait Queue {
    fn set(&mut self, id: u64, l: Line);
    fn get(&self, id: u64) -> Option<Line>;
    fn pop(&mut self) -> Option<(u64, f64)>;
    fn peek(&self) -> Option<(u64, f64)>;
    /// Returns nodes recomputed (0 for brute force).
    fn advance(&mut self, t: f64) -> u64;
}

impl Queue for KineticQueue {
    fn set(&mut self, id: u64, l: Line) {
        self.set_line(id, l).expect("finite");
    }
    fn get(&self, id: u64) -> Option<Line> {
        self.line(id)
    }
    fn pop(&mut self) -> Option<(u64, f64)> {
        self.pop_min()
    }
    fn peek(&self) -> Option<(u64, f64)> {
        self.peek_min()
    }
    fn advance(&mut self, t: f64) -> u64 {
        KineticQueue::advance(self, t).expect("forward").recomputed
    }
}

struct Brute(BruteForceQueue, std::collections::HashMap<u64, Line>);

impl Queue for Brute {
    fn set(&mut self, id: u64, l: Line) {
        self.0.set_line(id, l);
        self.1.insert(id, l);
    }
    fn get(&self, id: u64) -> Option<Line> {
        self.1.get(&id).copied()
    }
    fn pop(&mut self) -> Option<(u64, f64)> {
        let m = self.0.pop_min()?;
        self.1.remove(&m.0);
        Some(m)
    }
    fn peek(&self) -> Option<(u64, f64)> {
        self.0.peek_min()
    }
    fn advance(&mut self, t: f64) -> u64 {
        self.0.advance(t).expect("forward");
        0
    }
}

/// Runs `ops`; returns (seconds, advances, nodes recomputed, checksum).
fn run(q: &mut dyn Queue, ops: &[Op], mut now: f64, seed: u64) -> (f64, u64, u64, f64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (mut advances, mut recomputed, mut sum) = (0u64, 0u64, 0.0);
    let t = Instant::now();
    for op in ops {
        match *op {
            Op::Reinforce(id, growth) => {
                if let Some(l) = q.get(id) {
                    let v = l.eval(now);
                    q.set(
                        id,
                        Line {
                            v0: v.max(0.0),
                            slope: l.slope / growth,
                            t0: now,
                        },
                    );
                }
            }
            Op::PopReinsert => {
                if let Some((id, v)) = q.pop() {
                    sum += v;
                    q.set(id, line(&mut rng, now));
                }
            }
            Op::Peek => sum += q.peek().map_or(0.0, |p| p.1),
            Op::Advance(dt) => {
                now += dt;
                recomputed += q.advance(now);
                advances += 1;
            }
        }
    }
    (t.elapsed().as_secs_f64(), advances, recomputed, sum)
}

fn main() -> Result<()> {
    let a = Args::parse();
    for &n in &a.sizes {
        let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64);
        let lines: Vec<Line> = (0..n).map(|_| line(&mut rng, T0)).collect();
        let mut kq = KineticQueue::new(T0);
        let t = Instant::now();
        for (i, l) in lines.iter().enumerate() {
            kq.set(i as u64, *l);
        }
        let fill = t.elapsed().as_secs_f64();
        let ops = workload(n, a.ops, 42);
        let (secs, advances, recomputed, _) = run(&mut kq, &ops, T0, 1);
        let kinetic_rate = a.ops as f64 / secs;

        let brute_ops = (a.brute_budget / n).clamp(1_000, a.ops);
        let mut bq = Brute(BruteForceQueue::new(T0), Default::default());
        for (i, l) in lines.iter().enumerate() {
            bq.set(i as u64, *l);
        }
        let (bsecs, _, _, _) = run(&mut bq, &ops[..brute_ops], T0, 1);
        let brute_rate = brute_ops as f64 / bsecs;
        let v = json!({
            "n": n, "ops": a.ops, "kinetic_ops_per_s": kinetic_rate,
            "fill_inserts_per_s": n as f64 / fill,
            "nodes_recomputed_per_advance": recomputed as f64 / advances.max(1) as f64,
            "brute_ops": brute_ops, "brute_ops_per_s": brute_rate,
            "speedup": kinetic_rate / brute_rate,
        });
        if a.json {
            println!("{v}");
        } else {
            eprintln!("{v:#}");
        }
    }
    Ok(())
}
