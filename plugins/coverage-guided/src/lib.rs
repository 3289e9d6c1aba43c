//! `coverage-guided`: a novelty-seeking strategy that plans.
//!
//! Every step pays *novelty*: coverage probes by their rarity (1 the first time, then less
//! each time hit), a screen signature by its rarity (`novelty-weight`), and each feature of
//! the app's snapshots never seen before (`state-weight`; the shape of the app's state — its
//! modes, how many records of which kind — not ids or amounts, see `features`).
//!
//! It learns a graph (see `model`) whose nodes are *abstract screens*, coarser than the
//! host's signature (numbers in ids left out, text only as present or absent), and whose
//! edges are the actions tried there, each with what it paid on average and where it led.
//! An action is worth what it paid plus `discount` times the value of where it leads; a
//! screen is worth its best action, expected over which actions are offered there. An
//! action not tried yet is worth its *promise* — the spec's weight of it relative to the
//! step's average, raised to `optimism-weighting` and capped at 1 — times `optimism`, at
//! every step from then on. One action offered by several generators is one arm, with
//! their weights summed. Every distinct action scores
//!
//! ```text
//! score = value + exploration * prior * sqrt(visits of this screen) / (tries of the action + 1)
//! ```
//!
//! where `prior` is the spec's weight of the action as a share of the step's. Ties are
//! broken by a generator seeded from `seed`. Without coverage from the app it guides by
//! screen (and snapshot) novelty alone, and says so once in the run log.

use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

use uatu_plugin_sdk::strategy::*;

mod features;
mod model;

use features::snapshot_features;
use model::Model;

const NO_COVERAGE_NOTE: &str = "the app reports no coverage: guiding by screen novelty (new screen signatures, \
     and new snapshot features if the app has snapshots) instead";

/// Rounds of value iteration per step: values carry over from step to step, so one round
/// a step keeps up with what is learnt (three measured no better on the simulator, at
/// three times the cost).
const SWEEPS: usize = 1;

#[derive(Clone, Copy)]
struct Settings {
    exploration: f64,
    novelty_weight: f64,
    state_weight: f64,
    discount: f64,
    learning_rate: f64,
    optimism: f64,
    rarity: f64,
    optimism_weighting: f64,
}

/// What the strategy reads of a step (the fields of the step context it uses).
struct Observation<'a> {
    /// The host's screen signature: what counts as a new screen.
    screen: &'a str,
    /// The strategy's coarser abstraction of the screen: where it plans (see `model`).
    state: u64,
    coverage: Option<&'a [String]>,
    snapshots: &'a str,
}

struct CoverageGuided {
    settings: Settings,
    rng: u64,
    model: Model,
    /// How often each probe was hit, and each screen seen.
    probes: HashMap<String, u32>,
    seen: HashMap<String, u32>,
    features: HashSet<String>,
    /// Hashes of the snapshots' texts seen so far.
    snapshots_seen: HashSet<u64>,
    /// The last choice: its screen and arm in the model.
    previous: Option<(usize, usize)>,
    told_no_coverage: bool,
}

fn positive(config: &Config, key: &str, default: f64) -> Result<f64, String> {
    let value = config.f64_or(key, default)?;
    if !(value >= 0.0 && value.is_finite()) {
        return Err(format!("`{key}` must be a number >= 0, not {value}"));
    }
    Ok(value)
}

fn below_one(config: &Config, key: &str, default: f64) -> Result<f64, String> {
    let value = positive(config, key, default)?;
    if value >= 1.0 {
        return Err(format!("`{key}` must be at least 0 and less than 1, not {value}"));
    }
    Ok(value)
}

fn fraction(config: &Config, key: &str, default: f64) -> Result<f64, String> {
    let value = positive(config, key, default)?;
    if value > 1.0 {
        return Err(format!("`{key}` must be between 0 and 1, not {value}"));
    }
    Ok(value)
}

impl CoverageGuided {
    fn new(settings: Settings, seed: u64) -> CoverageGuided {
        CoverageGuided {
            settings,
            rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            model: Model::new(settings.discount, settings.optimism, settings.learning_rate),
            probes: HashMap::new(),
            seen: HashMap::new(),
            features: HashSet::new(),
            snapshots_seen: HashSet::new(),
            previous: None,
            told_no_coverage: false,
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*: deterministic, seeded from the config.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The novelty this step shows: probes and a screen by their rarity (1 the first time,
    /// then 1/sqrt(times seen), with `rarity` as the exponent's weight), new snapshot features.
    fn novelty(&mut self, observation: &Observation) -> f64 {
        let rarity = self.settings.rarity;
        // Seen n times: 1 the first time, then n^(-rarity/2); rarity 0 pays the first time only.
        let graded = |count: u32| match count {
            1 => 1.0,
            _ if rarity > 0.0 => f64::from(count).powf(-0.5 * rarity),
            _ => 0.0,
        };
        let screen = graded(count(&mut self.seen, observation.screen));
        let probes: f64 = observation
            .coverage
            .into_iter()
            .flatten()
            .map(|probe| graded(count(&mut self.probes, probe)))
            .sum();
        let mut new_features = 0;
        // Features are a function of the snapshots' text: text seen before has no new ones
        // (and most steps repeat an earlier state: this skips parsing it again).
        if self.settings.state_weight > 0.0 && self.snapshots_seen.insert(fnv_hash(observation.snapshots)) {
            for feature in snapshot_features(observation.snapshots) {
                if self.features.insert(feature) {
                    new_features += 1;
                }
            }
        }
        probes + self.settings.novelty_weight * screen + self.settings.state_weight * new_features as f64
    }

    /// Chooses the index of one of `candidates` (never empty) and learns from the step:
    /// the previous choice is credited with this step's novelty and with where it led.
    fn decide(&mut self, observation: &Observation, candidates: &[Candidate]) -> usize {
        let pay = self.novelty(observation);
        let screen = self.model.visit(observation.state);
        if let Some((from, arm)) = self.previous.take() {
            self.model.learn(from, arm, pay, screen);
        }
        // The distinct actions offered (a spec may offer one action from several
        // generators), each with the sum of its candidates' priors.
        let mut offered: Vec<(&str, f64, usize)> = Vec::with_capacity(candidates.len());
        for (index, (candidate, prior)) in candidates.iter().zip(priors(candidates)).enumerate() {
            match offered
                .iter_mut()
                .find(|(action, _, _)| *action == candidate.action)
            {
                Some((_, total, _)) => *total += prior,
                None => offered.push((&candidate.action, prior, index)),
            }
        }
        let uniform = offered.len() as f64;
        let arms: Vec<usize> = offered
            .iter()
            .map(|&(action, prior, _)| {
                let promise = (prior * uniform).powf(self.settings.optimism_weighting).min(1.0);
                self.model.offer(screen, action, promise)
            })
            .collect();
        self.model.plan(SWEEPS);
        let exploration = self.settings.exploration;
        let visits = f64::from(self.model.screen_ref(screen).visits).sqrt();
        let mut best: Option<(f64, u64, usize)> = None;
        for (choice, (&arm, &(_, prior, _))) in arms.iter().zip(&offered).enumerate() {
            let tie = self.next_random();
            let arm = self.model.arm_ref(screen, arm);
            let bonus = exploration * prior * visits / f64::from(arm.tries + 1);
            let score = self.model.value(arm) + bonus;
            if best.is_none_or(|(best_score, best_tie, _)| {
                score > best_score || (score == best_score && tie > best_tie)
            }) {
                best = Some((score, tie, choice));
            }
        }
        let (_, _, choice) = best.unwrap_or((0.0, 0, 0));
        self.model.tried(screen, arms[choice]);
        self.previous = Some((screen, arms[choice]));
        offered[choice].2
    }
}

/// Counts one more sighting of `key` and returns its count; the key is copied only the
/// first time (this runs for the screen and every probe of every step).
fn count(counts: &mut HashMap<String, u32>, key: &str) -> u32 {
    let count = match counts.get_mut(key) {
        Some(count) => count,
        None => counts.entry(key.to_string()).or_default(),
    };
    *count += 1;
    *count
}

fn fnv_hash(text: &str) -> u64 {
    let mut hash = fnv::FnvHasher::default();
    hash.write(text.as_bytes());
    hash.finish()
}

/// The spec's weights as a distribution over the candidates: each generator's weight (the
/// product along its path) is shared among the actions it offered, then normalised.
fn priors(candidates: &[Candidate]) -> Vec<f64> {
    let mut per_path: HashMap<&str, u32> = HashMap::new();
    for candidate in candidates {
        *per_path.entry(candidate.path.as_str()).or_default() += 1;
    }
    let raw: Vec<f64> = candidates
        .iter()
        .map(|c| {
            let weight = if c.weight.is_finite() && c.weight > 0.0 {
                c.weight
            } else {
                0.0
            };
            weight / f64::from(per_path[c.path.as_str()])
        })
        .collect();
    let total: f64 = raw.iter().sum();
    if total > 0.0 {
        raw.iter().map(|w| w / total).collect()
    } else {
        vec![1.0 / candidates.len().max(1) as f64; candidates.len()]
    }
}

impl Strategy for CoverageGuided {
    fn init(config: Config) -> Result<Self, String> {
        let settings = Settings {
            exploration: positive(&config, "exploration", 1.0)?,
            novelty_weight: positive(&config, "novelty-weight", 1.0)?,
            state_weight: positive(&config, "state-weight", 1.5)?,
            discount: below_one(&config, "discount", 0.3)?,
            learning_rate: fraction(&config, "learning-rate", 0.25)?,
            optimism: positive(&config, "optimism", 2.0)?,
            rarity: positive(&config, "rarity", 1.0)?,
            optimism_weighting: positive(&config, "optimism-weighting", 1.0)?,
        };
        let seed = config.f64_or("seed", 1.0)? as u64;
        Ok(CoverageGuided::new(settings, seed))
    }

    fn choose(&mut self, ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        if candidates.is_empty() {
            return Err("no candidates".into());
        }
        let observation = Observation {
            screen: &ctx.screen_signature,
            state: model::abstract_screen(&ctx.hierarchy),
            coverage: ctx.coverage.as_deref(),
            snapshots: &ctx.snapshots,
        };
        let index = self.decide(&observation, candidates);
        let chosen = candidates[index].id;
        if ctx.coverage.is_none() && !self.told_no_coverage {
            self.told_no_coverage = true;
            return Ok(Choice::with_note(chosen, NO_COVERAGE_NOTE));
        }
        Ok(Choice::new(chosen))
    }
}

uatu_plugin_sdk::export_strategy!(CoverageGuided);

#[cfg(test)]
mod tests;
