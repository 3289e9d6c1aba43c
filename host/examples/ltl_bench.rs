//! LTL benchmark: 20 properties over 10 random predicates for 200,000 steps;
//! prints the mean cost of one `PropertySet::step` and the most obligations
//! pending at once. Run: `cargo run --release -p uatu --example ltl_bench`.

use std::time::Instant;
use uatu::ltl::*;

fn main() {
    let p = |i| Formula::pred(i);
    let mut props = Vec::new();
    for k in 0..4u32 {
        let a = 2 * k;
        let b = 2 * k + 1;
        props.push(p(a).implies(p(b).eventually()).always());
        props.push(p(a).implies(p(b).eventually_within(Bound::Steps(50))));
        props.push(p(a).implies(p(b).next()));
        props.push(p(a).and(p(b)).eventually_within(Bound::Ms(2000)).not());
        props.push(
            p(a).implies(
                p(b).and(p(8).eventually_within(Bound::Steps(5)))
                    .eventually_within(Bound::Ms(3000)),
            ),
        );
    }
    let mut set = PropertySet::new(
        props
            .into_iter()
            .enumerate()
            .map(|(i, f)| (format!("prop{i}"), f)),
    );
    let mut state = 0x2545F4914F6CDD1Du64;
    let steps = 200_000u64;
    let mut values: Vec<PredicateValue> = vec![Ok(false); 10];
    let mut total = std::time::Duration::ZERO;
    let mut max_pending = 0;
    for index in 0..steps {
        for v in values.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *v = Ok(state.is_multiple_of(4));
        }
        let input = StepInput {
            index,
            time_ms: index * 250,
            predicates: &values,
        };
        let start = Instant::now();
        set.step(&input);
        total += start.elapsed();
        max_pending = max_pending.max(set.monitors().iter().map(|m| m.pending().len()).sum::<usize>());
    }
    println!(
        "{} properties: {:.2} µs per step (mean over {steps} steps), max pending obligations (all properties) {max_pending}",
        set.monitors().len(),
        total.as_secs_f64() * 1e6 / steps as f64
    );
    for r in set.reports().iter().take(5) {
        println!("{} {}", r.name, r.verdict);
    }
}
