//! `coverage-guided`: a novelty-seeking strategy. It learns, per (screen signature, action)
//! pair, how much novelty the action pays: coverage probes never hit before (1 each) or
//! rarely hit (1/sqrt(times hit)), a screen signature never seen (`novelty-weight`) or
//! rarely seen (weighted the same way), and features of the app's snapshots never seen
//! before (`state-weight` each; the shape of the app's state — its modes, how many records
//! of which kind — not ids or amounts). The value of a pair is a running average of what
//! it paid (`learning-rate` is the least weight of the newest payoff, so a pair that stops
//! paying loses its value); `discount` > 0 also credits a pair with the value of the
//! screen it led to (tabular Q-learning), 0 (the default) makes it a bandit.
//!
//! Every candidate is scored
//!
//! ```text
//! score = value + exploration * prior * sqrt(tries on this screen + 1) / (tries of the pair + 1)
//! ```
//!
//! where an untried pair's value is `optimism`, and `prior` is the spec's weight of the
//! candidate, shared among the actions of one generator and normalised over the step's
//! candidates: untried pairs go first, in the order the spec's weights suggest, and the
//! exploration bonus follows the weights. Ties are broken by a generator seeded from
//! `seed`. Without coverage from the app it guides by screen (and snapshot) novelty alone,
//! and says so once in the run log.

use std::collections::{BTreeMap, HashMap, HashSet};

use uatu_plugin_sdk::strategy::*;

const NO_COVERAGE_NOTE: &str = "the app reports no coverage: guiding by screen novelty (new screen signatures, \
     and new snapshot features if the app has snapshots) instead";

#[derive(Default, Clone, Copy)]
struct Arm {
    tries: u32,
    value: f64,
}

#[derive(Clone, Copy)]
struct Settings {
    exploration: f64,
    novelty_weight: f64,
    state_weight: f64,
    discount: f64,
    learning_rate: f64,
    optimism: f64,
    rarity: f64,
}

/// What the strategy reads of a step (the fields of the step context it uses).
struct Observation<'a> {
    screen: &'a str,
    coverage: Option<&'a [String]>,
    snapshots: &'a str,
}

struct CoverageGuided {
    settings: Settings,
    rng: u64,
    /// Per screen signature: its arms by action, and how often anything was tried there.
    screens: HashMap<String, Screen>,
    /// How often each probe was hit, and each screen seen.
    probes: HashMap<String, u32>,
    seen: HashMap<String, u32>,
    features: HashSet<String>,
    previous: Option<(String, String)>,
    told_no_coverage: bool,
}

#[derive(Default)]
struct Screen {
    arms: HashMap<String, Arm>,
    tries: u32,
}

impl Screen {
    /// The best value known of this screen: what reaching it is worth.
    fn value(&self) -> f64 {
        self.arms.values().map(|arm| arm.value).fold(0.0, f64::max)
    }
}

fn positive(config: &Config, key: &str, default: f64) -> Result<f64, String> {
    let value = config.f64_or(key, default)?;
    if !(value >= 0.0 && value.is_finite()) {
        return Err(format!("`{key}` must be a number >= 0, not {value}"));
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
            screens: HashMap::new(),
            probes: HashMap::new(),
            seen: HashMap::new(),
            features: HashSet::new(),
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
        let seen = self.seen.entry(observation.screen.to_string()).or_default();
        *seen += 1;
        let screen = graded(*seen);
        let mut probes = 0.0;
        for probe in observation.coverage.into_iter().flatten() {
            let count = self.probes.entry(probe.clone()).or_default();
            *count += 1;
            probes += graded(*count);
        }
        let mut new_features = 0;
        if self.settings.state_weight > 0.0 {
            for feature in snapshot_features(observation.snapshots) {
                if self.features.insert(feature) {
                    new_features += 1;
                }
            }
        }
        probes + self.settings.novelty_weight * screen + self.settings.state_weight * new_features as f64
    }

    /// Credits the previous step's choice with this step's novelty and the value of where it led.
    fn learn(&mut self, observation: &Observation) {
        let reward = self.novelty(observation);
        let reached = self
            .screens
            .entry(observation.screen.to_string())
            .or_default()
            .value();
        if let Some((screen, action)) = self.previous.take()
            && let Some(arm) = self
                .screens
                .get_mut(&screen)
                .and_then(|s| s.arms.get_mut(&action))
        {
            let rate = (1.0 / f64::from(arm.tries.max(1))).max(self.settings.learning_rate);
            arm.value += rate * (reward + self.settings.discount * reached - arm.value);
        }
    }

    /// Chooses the index of one of `candidates` (never empty) and learns from the step.
    fn decide(&mut self, observation: &Observation, candidates: &[Candidate]) -> usize {
        self.learn(observation);
        let priors = priors(candidates);
        let keys: Vec<&str> = candidates.iter().map(|c| c.action.as_str()).collect();
        let exploration = self.settings.exploration;
        let optimism = self.settings.optimism;
        let mut ties = Vec::with_capacity(candidates.len());
        for _ in candidates {
            ties.push(self.next_random());
        }
        let screen = self.screens.entry(observation.screen.to_string()).or_default();
        let visits = f64::from(screen.tries + 1).sqrt();
        let mut best: Option<(f64, u64, usize)> = None;
        for index in 0..candidates.len() {
            let arm = screen.arms.get(keys[index]).copied().unwrap_or_default();
            let bonus = exploration * priors[index] * visits / f64::from(arm.tries + 1);
            // Optimism in the face of the unknown: an untried action is worth `optimism`
            // until it has been tried.
            let value = if arm.tries == 0 { optimism } else { arm.value };
            let score = value + bonus;
            let tie = ties[index];
            if best.is_none_or(|(best_score, best_tie, _)| {
                score > best_score || (score == best_score && tie > best_tie)
            }) {
                best = Some((score, tie, index));
            }
        }
        let (_, _, index) = best.unwrap_or((0.0, 0, 0));
        let action = keys[index].to_string();
        screen.tries += 1;
        screen.arms.entry(action.clone()).or_default().tries += 1;
        self.previous = Some((observation.screen.to_string(), action));
        index
    }
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

/// An abstraction of the app's snapshots as a set of features, the way fuzzers bucket hit
/// counts: top-level booleans, short strings and null exactly, numbers by sign and order of
/// magnitude, array lengths bucketed, and for arrays (of records) how many elements have
/// each field in each abstract value, bucketed — so "three records whose count is 2" is a
/// feature, while ids and balances that change with every record are not.
fn snapshot_features(snapshots: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(snapshots) else {
        return Vec::new();
    };
    let mut features = Vec::new();
    for (key, value) in &map {
        top_level(key, value, &mut features);
    }
    features
}

fn top_level(path: &str, value: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            out.push(format!("{path}#keys={}", bucket(map.len() as u64)));
            for (key, value) in map {
                top_level(&format!("{path}.{key}"), value, out);
            }
        }
        Value::Array(items) => {
            out.push(format!("{path}#len={}", bucket(items.len() as u64)));
            let mut histogram: BTreeMap<String, u64> = BTreeMap::new();
            for item in items {
                element(path, item, &mut histogram);
            }
            out.extend(
                histogram
                    .into_iter()
                    .map(|(value, count)| format!("{value}x{}", bucket(count))),
            );
        }
        Value::String(text) if text.chars().count() <= 24 => out.push(format!("{path}={text:?}")),
        other => out.push(format!("{path}={}", scalar(other))),
    }
}

/// One array element's abstract fields, counted (an element's fields at most one level deep).
fn element(path: &str, item: &serde_json::Value, histogram: &mut BTreeMap<String, u64>) {
    match item {
        serde_json::Value::Object(fields) => {
            for (key, value) in fields {
                *histogram
                    .entry(format!("{path}[].{key}={}", scalar(value)))
                    .or_default() += 1;
            }
        }
        other => {
            *histogram
                .entry(format!("{path}[]={}", scalar(other)))
                .or_default() += 1
        }
    }
}

/// A value's abstraction inside a record: its kind and a coarse magnitude.
fn scalar(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or(0.0);
            let magnitude = n.abs();
            let sign = if n < 0.0 { "-" } else { "" };
            if magnitude < 4.0 {
                format!("{sign}{}", magnitude.floor() as u64)
            } else if n.fract() != 0.0 {
                format!("{sign}frac~{}", magnitude.log2().floor() as i64)
            } else {
                format!("{sign}~{}", (magnitude.log2() / 2.0).floor() as i64 * 2)
            }
        }
        Value::String(text) => format!("str~{}", bucket(text.chars().count() as u64)),
        Value::Array(items) => format!("list~{}", bucket(items.len() as u64)),
        Value::Object(map) => format!("obj~{}", bucket(map.len() as u64)),
    }
}

/// Hit-count buckets: 0, 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+.
fn bucket(n: u64) -> &'static str {
    match n {
        0 => "0",
        1 => "1",
        2 => "2",
        3 => "3",
        4..=7 => "4-7",
        8..=15 => "8-15",
        16..=31 => "16-31",
        32..=127 => "32-127",
        _ => "128+",
    }
}

impl Strategy for CoverageGuided {
    fn init(config: Config) -> Result<Self, String> {
        let settings = Settings {
            exploration: positive(&config, "exploration", 1.0)?,
            novelty_weight: positive(&config, "novelty-weight", 1.0)?,
            state_weight: positive(&config, "state-weight", 1.5)?,
            discount: fraction(&config, "discount", 0.0)?,
            learning_rate: fraction(&config, "learning-rate", 0.25)?,
            optimism: positive(&config, "optimism", 2.0)?,
            rarity: positive(&config, "rarity", 1.0)?,
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
