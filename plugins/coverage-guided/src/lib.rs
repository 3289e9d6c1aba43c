//! `coverage-guided`: a strategy that prefers the actions whose (screen, action)
//! pair has been tried least and has paid off most, where "paid off" means new
//! coverage probes hit on the next step or, when the app reports no coverage,
//! a screen never seen before. An upper-confidence-bound rule balances the two:
//! score = reward / tries + exploration * sqrt(ln(tries on this screen + 1) / (tries + 1)).
//!
//! Config (`[plugins.coverage-guided]`): `exploration` (default 1.0; 0 = pure
//! exploitation), `seed` (default 1; breaks ties), `novelty-weight` (default 1.0;
//! the reward of a new screen, added to new probes).

use std::collections::{HashMap, HashSet};

use uatu_plugin_sdk::strategy::*;

#[derive(Default, Clone, Copy)]
struct Arm {
    tries: u32,
    reward: f64,
}

struct CoverageGuided {
    exploration: f64,
    novelty_weight: f64,
    rng: u64,
    arms: HashMap<(String, String), Arm>,
    screen_tries: HashMap<String, u32>,
    screens: HashSet<String>,
    probes: HashSet<String>,
    previous: Option<(String, String)>,
    told_no_coverage: bool,
}

impl CoverageGuided {
    fn next_random(&mut self) -> u64 {
        // xorshift64*: deterministic, seeded from the config.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Credits the previous step's choice with what this step shows.
    fn learn(&mut self, ctx: &StepContext) {
        let new_screen = self.screens.insert(ctx.screen_signature.clone());
        let new_probes = ctx
            .coverage
            .iter()
            .flatten()
            .filter(|probe| self.probes.insert((*probe).clone()))
            .count();
        if let Some(previous) = self.previous.take() {
            let arm = self.arms.entry(previous).or_default();
            arm.reward += new_probes as f64 + if new_screen { self.novelty_weight } else { 0.0 };
        }
    }
}

impl Strategy for CoverageGuided {
    fn init(config: Config) -> Result<Self, String> {
        let exploration = config.f64_or("exploration", 1.0)?;
        if !(exploration >= 0.0 && exploration.is_finite()) {
            return Err(format!("`exploration` must be a number >= 0, not {exploration}"));
        }
        let seed = config.f64_or("seed", 1.0)? as u64;
        Ok(CoverageGuided {
            exploration,
            novelty_weight: config.f64_or("novelty-weight", 1.0)?,
            rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            arms: HashMap::new(),
            screen_tries: HashMap::new(),
            screens: HashSet::new(),
            probes: HashSet::new(),
            previous: None,
            told_no_coverage: false,
        })
    }

    fn choose(&mut self, ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        self.learn(ctx);
        let screen = ctx.screen_signature.clone();
        let screen_tries = f64::from(*self.screen_tries.get(&screen).unwrap_or(&0));
        let mut best: Option<(f64, u64, usize)> = None;
        for (index, candidate) in candidates.iter().enumerate() {
            let arm = self.arms.get(&(screen.clone(), candidate.action.clone())).copied().unwrap_or_default();
            let tries = f64::from(arm.tries);
            let mean = if arm.tries == 0 { 0.0 } else { arm.reward / tries };
            let bonus = self.exploration * ((screen_tries + 1.0).ln() / (tries + 1.0)).sqrt();
            // Untried actions first, the spec's weight as a mild prior.
            let untried = if arm.tries == 0 { 1e6 } else { 0.0 };
            let score = untried + mean + bonus + 1e-3 * candidate.weight.max(1e-9).ln();
            let tie = self.next_random();
            if best.is_none_or(|(best_score, best_tie, _)| score > best_score || (score == best_score && tie > best_tie)) {
                best = Some((score, tie, index));
            }
        }
        let (_, _, index) = best.ok_or("no candidates")?;
        let chosen = &candidates[index];
        let key = (screen.clone(), chosen.action.clone());
        self.arms.entry(key.clone()).or_default().tries += 1;
        *self.screen_tries.entry(screen).or_default() += 1;
        self.previous = Some(key);
        if ctx.coverage.is_none() && !self.told_no_coverage {
            self.told_no_coverage = true;
            return Ok(Choice::with_note(
                chosen.id,
                "the app reports no coverage: guiding by screen novelty (new screen signatures) instead",
            ));
        }
        Ok(Choice::new(chosen.id))
    }
}

uatu_plugin_sdk::export_strategy!(CoverageGuided);
