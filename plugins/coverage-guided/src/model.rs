//! What the strategy learns of the app: a graph of abstract screens whose edges are the
//! actions tried there, each with what it paid on average and where it led, and the value
//! of each screen by value iteration over that graph.

use std::collections::HashMap;
use std::hash::Hasher;

use fnv::FnvHasher;

use uatu_plugin_sdk::strategy::Hierarchy;

/// An abstraction of a screen coarser than the host's signature, for planning: the tree's
/// shape, classes, resource ids and descriptions with their numbers left out (`ledger_row:t12`
/// and `ledger_row:t13` are the same kind of row, so a list of any of them is one screen),
/// and whether each node has text at all (a form with its amount typed is another state
/// than the empty form; what was typed is not). Runs of identical siblings count once.
pub fn abstract_screen(hierarchy: &Hierarchy) -> u64 {
    let nodes: Vec<_> = hierarchy.nodes().collect();
    if nodes.is_empty() {
        return 0;
    }
    subtree(&nodes, 0).0
}

/// The hash of the subtree rooted at `nodes[index]`, and the index after it.
fn subtree(nodes: &[uatu_plugin_sdk::strategy::Node<'_>], index: usize) -> (u64, usize) {
    let node = &nodes[index];
    let mut hash = FnvHasher::default();
    hash.write(node.class().as_bytes());
    hash.write(b"\x1f");
    write_without_digits(&mut hash, node.id());
    hash.write(b"\x1f");
    write_without_digits(&mut hash, node.desc());
    hash.write(if node.text().is_empty() { b"\x1e" } else { b"\x1c" });
    let mut next = index + 1;
    let mut previous = None;
    while next < nodes.len() && nodes[next].depth() > node.depth() {
        let (child, after) = subtree(nodes, next);
        if previous != Some(child) {
            hash.write(&child.to_le_bytes());
        }
        previous = Some(child);
        next = after;
    }
    hash.write(b"\x1d");
    (hash.finish(), next)
}

/// Writes `text` with each run of digits as one `#`.
fn write_without_digits(hash: &mut FnvHasher, text: &str) {
    let mut in_number = false;
    for byte in text.bytes() {
        let digit = byte.is_ascii_digit();
        if !digit {
            hash.write_u8(byte);
        } else if !in_number {
            hash.write_u8(b'#');
        }
        in_number = digit;
    }
}

/// An action as tried on one abstract screen.
#[derive(Default, Clone)]
pub struct Arm {
    pub tries: u32,
    /// A running average of the novelty it paid.
    pub pay: f64,
    /// How often it was offered on its screen: with the screen's visits, how likely it is
    /// to be among the candidates when the screen is reached again.
    offered: u32,
    /// The share of `optimism` it is worth untried (from the spec's weight of it).
    promise: f64,
    /// The abstract screens it led to, with how often.
    next: Vec<(usize, u32)>,
    /// How many of `tries` have an outcome in `next` (the last try's is learnt a step later).
    outcomes: u32,
}

#[derive(Default)]
pub struct Screen {
    pub arms: Vec<Arm>,
    arm_index: HashMap<String, usize>,
    /// Steps spent on this screen.
    pub visits: u32,
    /// What reaching this screen is worth: the best arm among those offered, expected over
    /// which are offered (see [`Model::plan`]).
    value: f64,
}

/// The learnt graph and the settings of its values.
pub struct Model {
    screens: Vec<Screen>,
    index: HashMap<u64, usize>,
    /// Share of the next screen's value credited to an action.
    discount: f64,
    /// Value of an action not tried yet.
    optimism: f64,
    /// Least weight of the newest payoff in an arm's pay.
    learning_rate: f64,
}

impl Model {
    pub fn new(discount: f64, optimism: f64, learning_rate: f64) -> Model {
        Model {
            screens: Vec::new(),
            index: HashMap::new(),
            discount,
            optimism,
            learning_rate,
        }
    }

    /// The index of abstract screen `key`, added the first time it is seen, and counts a visit.
    pub fn visit(&mut self, key: u64) -> usize {
        let screens = &mut self.screens;
        let index = *self.index.entry(key).or_insert_with(|| {
            screens.push(Screen::default());
            screens.len() - 1
        });
        self.screens[index].visits += 1;
        index
    }

    /// The index of `action` on `screen`, added untried the first time it is offered there
    /// (once per visit); `promise` is the share of `optimism` it is worth while untried.
    pub fn offer(&mut self, screen: usize, action: &str, promise: f64) -> usize {
        let screen = &mut self.screens[screen];
        let index = match screen.arm_index.get(action) {
            Some(&arm) => arm,
            None => {
                screen.arms.push(Arm::default());
                screen.arm_index.insert(action.to_string(), screen.arms.len() - 1);
                screen.arms.len() - 1
            }
        };
        let arm = &mut screen.arms[index];
        arm.offered += 1;
        arm.promise = promise;
        index
    }

    pub fn arm_ref(&self, screen: usize, arm: usize) -> &Arm {
        &self.screens[screen].arms[arm]
    }

    pub fn screen_ref(&self, screen: usize) -> &Screen {
        &self.screens[screen]
    }

    /// Counts a choice of `arm` on `screen`.
    pub fn tried(&mut self, screen: usize, arm: usize) {
        self.screens[screen].arms[arm].tries += 1;
    }

    /// What the last choice of `arm` on `screen` paid, and where it led.
    pub fn learn(&mut self, screen: usize, arm: usize, pay: f64, reached: usize) {
        let arm = &mut self.screens[screen].arms[arm];
        let rate = (1.0 / f64::from(arm.tries.max(1))).max(self.learning_rate);
        arm.pay += rate * (pay - arm.pay);
        arm.outcomes += 1;
        match arm.next.iter_mut().find(|(screen, _)| *screen == reached) {
            Some((_, count)) => *count += 1,
            None => arm.next.push((reached, 1)),
        }
    }

    /// An arm's worth. Untried, that of an action paying its share of `optimism` at every
    /// step (`promise * optimism / (1 - discount)`); tried, what it paid plus the discounted
    /// value of where it led (weighted by how often it led there). So an untried action goes
    /// before a known one unless the known one paid more than its promise or leads somewhere
    /// better.
    pub fn value(&self, arm: &Arm) -> f64 {
        if arm.tries == 0 {
            return arm.promise * self.optimism / (1.0 - self.discount);
        }
        if self.discount == 0.0 || arm.outcomes == 0 {
            return arm.pay;
        }
        let ahead: f64 = arm
            .next
            .iter()
            .map(|&(screen, count)| f64::from(count) * self.screens[screen].value)
            .sum();
        arm.pay + self.discount * ahead / f64::from(arm.outcomes)
    }

    /// Brings every screen's value closer to what being there is worth (`sweeps` rounds of
    /// value iteration). A screen's candidates change from visit to visit (a spec draws
    /// typed text at random, offers Save only once a field is filled), so its value is the
    /// best arm *among those offered*, expected over how often each is offered: the best
    /// arm counts with the chance that it is offered, the second best with the chance that
    /// it is and the best is not, and so on. Values carry over from step to step, so a few
    /// sweeps a step follow what was learnt; with `discount` < 1 they stay bounded.
    pub fn plan(&mut self, sweeps: usize) {
        if self.discount == 0.0 {
            return;
        }
        let mut ranked: Vec<(f64, f64)> = Vec::new();
        for _ in 0..sweeps {
            for index in 0..self.screens.len() {
                let screen = &self.screens[index];
                let visits = f64::from(screen.visits.max(1));
                ranked.clear();
                ranked.extend(
                    screen
                        .arms
                        .iter()
                        .map(|arm| (self.value(arm), (f64::from(arm.offered) / visits).min(1.0))),
                );
                ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
                let mut none_better = 1.0;
                let mut value = 0.0;
                for &(worth, offered) in &ranked {
                    value += worth * offered * none_better;
                    none_better *= 1.0 - offered;
                }
                self.screens[index].value = value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger screen: a toolbar, then a list of `rows` rows with numbered ids, an amount
    /// field holding `amount`.
    fn ledger(rows: u32, first_id: u32, amount: &str) -> Hierarchy {
        let mut tree = Hierarchy::default();
        tree.push(0, "FrameLayout", "root", "", "");
        tree.push(1, "Toolbar", "toolbar", "Ledger", "Folio");
        tree.push(1, "RecyclerView", "list", "", "");
        for row in 0..rows {
            let id = format!("ledger_row:t{}", first_id + row);
            tree.push(2, "TextView", &id, "", &format!("Coffee {row}"));
        }
        tree.push(1, "EditText", "amount", "", amount);
        tree
    }

    #[test]
    fn an_abstract_screen_ignores_numbers_text_and_how_many_rows_alike() {
        let screen = abstract_screen(&ledger(3, 12, ""));
        assert_eq!(screen, abstract_screen(&ledger(3, 40, "")), "numbers in ids");
        assert_eq!(
            screen,
            abstract_screen(&ledger(7, 12, "")),
            "how many identical rows"
        );
        assert_ne!(screen, abstract_screen(&ledger(0, 12, "")), "an empty list");
        let typed = abstract_screen(&ledger(3, 12, "4.20"));
        assert_ne!(
            screen, typed,
            "a field with text is another state than an empty one"
        );
        assert_eq!(
            typed,
            abstract_screen(&ledger(3, 12, "99")),
            "what was typed is not"
        );
        let mut dialog = ledger(3, 12, "");
        dialog.push(1, "AlertDialog", "confirm", "", "");
        assert_ne!(screen, abstract_screen(&dialog), "a dialog on top");
        assert_eq!(abstract_screen(&Hierarchy::default()), 0);
    }

    #[test]
    fn an_untried_arm_is_worth_its_share_of_optimism_at_every_step() {
        let mut model = Model::new(0.5, 2.0, 0.25);
        let screen = model.visit(1);
        let arm = model.offer(screen, "tap", 0.25);
        assert_eq!(model.value(model.arm_ref(screen, arm)), 0.25 * 2.0 / (1.0 - 0.5));
    }

    #[test]
    fn a_screen_is_worth_its_best_arm_weighted_by_how_often_it_is_offered() {
        // Screen 1 is visited 4 times: `rare` (pays 4) is offered once, `always` (pays 1)
        // every time; both lead to screen 2, where nothing is offered.
        let mut model = Model::new(0.5, 1.0, 0.25);
        let start = model.visit(1);
        let rare = model.offer(start, "rare", 1.0);
        model.offer(start, "always", 1.0);
        model.tried(start, rare);
        let end = model.visit(2);
        model.learn(start, rare, 4.0, end);
        for _ in 0..3 {
            let start = model.visit(1);
            let always = model.offer(start, "always", 1.0);
            model.tried(start, always);
            let end = model.visit(2);
            model.learn(start, always, 1.0, end);
        }
        model.plan(1);
        let value = model.screens[start].value;
        assert!(
            (value - (0.25 * 4.0 + 0.75 * 1.0)).abs() < 1e-9,
            "the rare arm counts a quarter, the other the rest: {value}"
        );
        // Credit flows back: an arm leading to `start` is worth what it paid plus half of that.
        let before = model.visit(3);
        let enter = model.offer(before, "enter", 1.0);
        model.tried(before, enter);
        model.learn(before, enter, 0.0, start);
        assert!((model.value(model.arm_ref(before, enter)) - 0.5 * value).abs() < 1e-9);
    }
}
