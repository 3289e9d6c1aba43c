//! The built-in strategy: a weighted-random walk down the spec's generator tree.
//!
//! At each level a child is drawn by its weight among the children that
//! offered at least one action this step (so a generator that yields nothing
//! is skipped and the draw is among the rest); at the generator that yielded
//! the actions, one is drawn uniformly.
//!
//! Two ways to walk it, with the same distribution: [`draw_on_screen`] over every
//! candidate of the step (what a strategy plugin is given too), and
//! [`draw_on_demand`], which asks the spec for the candidates of the branches it
//! draws only, redrawing among a node's other children when a branch offers nothing.

use rand::Rng;

use crate::action::{ActionTree, Candidate, ResolvedAction};
use crate::run::target::resolve_action;
use uatu_device::model::Node;

/// The built-in choice among `remaining`: a weighted draw; a candidate whose
/// target is not on `hierarchy` is dropped and the draw repeated among the rest.
pub fn draw_on_screen(
    mut remaining: Vec<Candidate>,
    hierarchy: &Node,
    rng: &mut impl Rng,
) -> Option<ResolvedAction> {
    while let Some(index) = choose_weighted(&remaining, rng) {
        let candidate = remaining.swap_remove(index);
        if let Ok(resolved) = resolve_action(&candidate.action, candidate.path_label(), hierarchy) {
            return Some(resolved);
        }
    }
    None
}

/// Picks the index of one candidate, or `None` when there are none.
pub fn choose_weighted(candidates: &[Candidate], rng: &mut impl Rng) -> Option<usize> {
    let mut group: Vec<usize> = (0..candidates.len()).collect();
    let mut depth = 0;
    loop {
        if group.is_empty() {
            return None;
        }
        // Candidates whose path ends here were yielded by this node itself.
        let (ended, deeper): (Vec<usize>, Vec<usize>) =
            group.iter().partition(|&&i| candidates[i].path.len() <= depth);
        if deeper.is_empty() {
            return Some(ended[rng.random_range(0..ended.len())]);
        }
        // Children in first-seen order, each with its weight; this node's own
        // actions, if any, compete as one more child of weight 1.
        let mut children: Vec<(Option<u32>, f64, Vec<usize>)> = Vec::new();
        for &i in &deeper {
            let step = &candidates[i].path[depth];
            match children
                .iter_mut()
                .find(|(index, _, _)| *index == Some(step.index))
            {
                Some((_, _, members)) => members.push(i),
                None => children.push((Some(step.index), step.weight, vec![i])),
            }
        }
        if !ended.is_empty() {
            children.push((None, 1.0, ended));
        }
        let chosen = by_weight(children.iter().map(|(_, weight, _)| *weight), rng);
        let (index, _, members) = children.swap_remove(chosen);
        if index.is_none() {
            return Some(members[rng.random_range(0..members.len())]);
        }
        group = members;
        depth += 1;
    }
}

/// The index of one of `weights` (at least one), drawn in proportion to its weight;
/// uniformly when none is positive.
fn by_weight(weights: impl Iterator<Item = f64> + Clone, rng: &mut impl Rng) -> usize {
    let count = weights.clone().count();
    let total: f64 = weights.clone().map(|weight| weight.max(0.0)).sum();
    if total <= 0.0 {
        return rng.random_range(0..count);
    }
    let mut ticket = rng.random_range(0.0..total);
    weights
        .map(|weight| weight.max(0.0))
        .position(|weight| {
            ticket -= weight;
            ticket < 0.0
        })
        .unwrap_or(count - 1)
}

/// The built-in choice, asking `offer` for the candidates of one place of `tree`
/// (a leaf) only when the draw reaches it: at each node a child is drawn by weight
/// among those not yet found empty, and drawn again among the others when its
/// branch offers nothing; at a leaf one of its candidates is drawn uniformly, and
/// one whose target is not on `hierarchy` is dropped and the draw repeated from the
/// root. Each place is offered at most once. The distribution is that of
/// [`draw_on_screen`] over every candidate; the random numbers drawn are not.
pub fn draw_on_demand<E>(
    tree: &ActionTree,
    hierarchy: &Node,
    rng: &mut impl Rng,
    offer: impl FnMut(usize) -> Result<Vec<Candidate>, E>,
) -> Result<Option<ResolvedAction>, E> {
    draw_on_demand_from(tree, 0, hierarchy, rng, offer)
}

/// [`draw_on_demand`] from the branch at `root` rather than the tree's root: a
/// spec's `setup` generator is a second root of the same tree.
pub fn draw_on_demand_from<E>(
    tree: &ActionTree,
    root: usize,
    hierarchy: &Node,
    rng: &mut impl Rng,
    offer: impl FnMut(usize) -> Result<Vec<Candidate>, E>,
) -> Result<Option<ResolvedAction>, E> {
    let mut walk = OnDemand {
        tree,
        offered: vec![None; tree.len()],
        empty: vec![false; tree.len()],
        offer,
    };
    while let Some(candidate) = walk.draw(root, rng)? {
        if let Ok(resolved) = resolve_action(&candidate.action, candidate.path_label(), hierarchy) {
            return Ok(Some(resolved));
        }
    }
    Ok(None)
}

/// The state of one [`draw_on_demand`]: the leaves offered so far (what remains
/// of their candidates) and the places known to offer nothing.
struct OnDemand<'t, F> {
    tree: &'t ActionTree,
    offered: Vec<Option<Vec<Candidate>>>,
    empty: Vec<bool>,
    offer: F,
}

impl<F, E> OnDemand<'_, F>
where
    F: FnMut(usize) -> Result<Vec<Candidate>, E>,
{
    /// One candidate drawn (and taken) from the branch at `place`; `None` when it
    /// has none left (the place is then marked empty) or when the tree has no such
    /// place (an empty tree, before the spec is loaded).
    fn draw(&mut self, place: usize, rng: &mut impl Rng) -> Result<Option<Candidate>, E> {
        let Some(node) = self.tree.place(place) else {
            return Ok(None);
        };
        if node.children.is_empty() {
            let remaining = match &mut self.offered[place] {
                Some(remaining) => remaining,
                unasked => unasked.insert((self.offer)(place)?),
            };
            if remaining.is_empty() {
                self.empty[place] = true;
                return Ok(None);
            }
            let index = rng.random_range(0..remaining.len());
            return Ok(Some(remaining.swap_remove(index)));
        }
        loop {
            let open: Vec<usize> = node
                .children
                .iter()
                .copied()
                .filter(|&child| !self.empty[child])
                .collect();
            if open.is_empty() {
                self.empty[place] = true;
                return Ok(None);
            }
            let weights = open.iter().map(|&child| self.weight(child));
            let child = open[by_weight(weights, rng)];
            if let Some(candidate) = self.draw(child, rng)? {
                return Ok(Some(candidate));
            }
        }
    }

    /// The weight the spec gave the place `place` among its siblings.
    fn weight(&self, place: usize) -> f64 {
        self.tree
            .place(place)
            .and_then(|node| node.path.last())
            .map_or(1.0, |step| step.weight)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use std::collections::HashMap;

    use super::*;
    use crate::action::{Action, PathStep};
    use uatu_device::model::Key;

    fn candidate(path: &[(u32, f64)], key: Key) -> Candidate {
        Candidate {
            path: path
                .iter()
                .map(|&(index, weight)| PathStep {
                    index,
                    weight,
                    label: None,
                })
                .collect(),
            action: Action::PressKey { key },
        }
    }

    fn frequencies(candidates: &[Candidate], draws: usize) -> Vec<usize> {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut counts = vec![0; candidates.len()];
        for _ in 0..draws {
            counts[choose_weighted(candidates, &mut rng).expect("a choice")] += 1;
        }
        counts
    }

    #[test]
    fn children_are_drawn_by_weight_and_actions_uniformly() {
        // weighted([3, gen A yielding 2 actions], [1, gen B yielding 1])
        let candidates = [
            candidate(&[(0, 3.0)], Key::Back),
            candidate(&[(0, 3.0)], Key::Home),
            candidate(&[(1, 1.0)], Key::Enter),
        ];
        let counts = frequencies(&candidates, 40_000);
        let share = |n: usize| n as f64 / 40_000.0;
        assert!((share(counts[0]) - 0.375).abs() < 0.02, "{counts:?}");
        assert!((share(counts[1]) - 0.375).abs() < 0.02, "{counts:?}");
        assert!((share(counts[2]) - 0.25).abs() < 0.02, "{counts:?}");
    }

    #[test]
    fn nested_weights_multiply_down_the_tree() {
        // weighted([1, weighted([1, A], [3, B])], [1, C])
        let candidates = [
            candidate(&[(0, 1.0), (0, 1.0)], Key::Back),
            candidate(&[(0, 1.0), (1, 3.0)], Key::Home),
            candidate(&[(1, 1.0)], Key::Enter),
        ];
        let counts = frequencies(&candidates, 40_000);
        let share = |n: usize| n as f64 / 40_000.0;
        assert!((share(counts[0]) - 0.125).abs() < 0.02, "{counts:?}");
        assert!((share(counts[1]) - 0.375).abs() < 0.02, "{counts:?}");
        assert!((share(counts[2]) - 0.5).abs() < 0.02, "{counts:?}");
    }

    #[test]
    fn a_generator_with_no_actions_is_never_drawn() {
        // Child 0 (weight 1000) yielded nothing this step: only child 1 remains.
        let candidates = [candidate(&[(1, 1.0)], Key::Enter)];
        assert_eq!(frequencies(&candidates, 100), vec![100]);
        assert_eq!(choose_weighted(&[], &mut ChaCha8Rng::seed_from_u64(1)), None);
    }

    /// One place of a test tree: its path as `(index, weight)` steps, and the keys it offers.
    type TestPlace<'a> = (&'a [(u32, f64)], &'a [Key]);

    /// A tree from its places, depth first, the root first; and what each offers.
    fn tree_of(places: &[TestPlace<'_>]) -> (ActionTree, Vec<Vec<Candidate>>) {
        let paths = places
            .iter()
            .map(|(path, _)| candidate(path, Key::Back).path)
            .collect();
        let offers = places
            .iter()
            .map(|(path, keys)| keys.iter().map(|&key| candidate(path, key)).collect())
            .collect();
        (ActionTree::from_paths(paths), offers)
    }

    /// How often each key is drawn on demand, and how many places were offered in all.
    fn on_demand_frequencies(
        tree: &ActionTree,
        offers: &[Vec<Candidate>],
        draws: usize,
    ) -> (HashMap<Key, usize>, usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (mut counts, mut offered) = (HashMap::new(), 0);
        for _ in 0..draws {
            let drawn = draw_on_demand(tree, &Node::default(), &mut rng, |place| {
                offered += 1;
                Ok::<_, ()>(offers[place].clone())
            })
            .expect("no offer fails");
            if let Some(ResolvedAction {
                action: Action::PressKey { key },
                ..
            }) = drawn
            {
                *counts.entry(key).or_default() += 1;
            }
        }
        (counts, offered)
    }

    #[test]
    fn drawing_on_demand_follows_the_weights_and_offers_only_the_drawn_branch() {
        // weighted([3, A yielding 2 actions], [1, B yielding 1]): as drawing over every candidate.
        let (tree, offers) = tree_of(&[
            (&[], &[]),
            (&[(0, 3.0)], &[Key::Back, Key::Home]),
            (&[(1, 1.0)], &[Key::Enter]),
        ]);
        let (counts, offered) = on_demand_frequencies(&tree, &offers, 40_000);
        let share = |key| counts.get(&key).copied().unwrap_or(0) as f64 / 40_000.0;
        assert!((share(Key::Back) - 0.375).abs() < 0.02, "{counts:?}");
        assert!((share(Key::Home) - 0.375).abs() < 0.02, "{counts:?}");
        assert!((share(Key::Enter) - 0.25).abs() < 0.02, "{counts:?}");
        // One branch per draw: none was empty, every target resolves.
        assert_eq!(offered, 40_000);
    }

    #[test]
    fn an_empty_branch_is_redrawn_among_its_siblings_not_from_the_root() {
        // weighted([1, weighted([1, A], [1, empty])], [1, B]): A is drawn half the time,
        // as over every candidate; restarting from the root would draw it 3/8 of the time.
        let (tree, offers) = tree_of(&[
            (&[], &[]),
            (&[(0, 1.0)], &[]),
            (&[(0, 1.0), (0, 1.0)], &[Key::Back]),
            (&[(0, 1.0), (1, 1.0)], &[]),
            (&[(1, 1.0)], &[Key::Enter]),
        ]);
        let (counts, _) = on_demand_frequencies(&tree, &offers, 40_000);
        let share = |key| counts.get(&key).copied().unwrap_or(0) as f64 / 40_000.0;
        assert!((share(Key::Back) - 0.5).abs() < 0.02, "{counts:?}");
        assert!((share(Key::Enter) - 0.5).abs() < 0.02, "{counts:?}");
    }

    #[test]
    fn drawing_on_demand_offers_each_place_once_and_drops_targets_not_on_screen() {
        // weighted([100, a tap on an element the screen lacks], [1, empty], [1, back]).
        let missing = Candidate {
            path: candidate(&[(0, 100.0)], Key::Back).path,
            action: Action::Tap {
                on: crate::action::Target::Selector("desc:not_on_screen".into()),
            },
        };
        let (tree, mut offers) = tree_of(&[
            (&[], &[]),
            (&[(0, 100.0)], &[]),
            (&[(1, 1.0)], &[]),
            (&[(2, 1.0)], &[Key::Back]),
        ]);
        offers[1] = vec![missing];
        for seed in 0..20 {
            let mut asked = Vec::new();
            let drawn = draw_on_demand(
                &tree,
                &Node::default(),
                &mut ChaCha8Rng::seed_from_u64(seed),
                |place| {
                    asked.push(place);
                    Ok::<_, ()>(offers[place].clone())
                },
            )
            .expect("no offer fails")
            .expect("an action");
            assert_eq!(drawn.action, Action::PressKey { key: Key::Back });
            let mut once = asked.clone();
            once.sort();
            once.dedup();
            assert_eq!(once.len(), asked.len(), "a place offered twice: {asked:?}");
        }
        // Nothing offered at all: no action, and the spec's error is passed on.
        let (tree, offers) = tree_of(&[(&[], &[]), (&[(0, 1.0)], &[])]);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let none = draw_on_demand(&tree, &Node::default(), &mut rng, |place| {
            Ok::<_, ()>(offers[place].clone())
        });
        assert_eq!(none, Ok(None));
        let failed = draw_on_demand(&tree, &Node::default(), &mut rng, |_| {
            Err::<Vec<Candidate>, _>("thrown")
        });
        assert_eq!(failed, Err("thrown"));
        assert_eq!(
            draw_on_demand(&ActionTree::default(), &Node::default(), &mut rng, |_| Err::<
                Vec<Candidate>,
                _,
            >(
                ()
            )),
            Ok(None)
        );
    }

    #[test]
    fn the_same_seed_draws_the_same_sequence() {
        let candidates: Vec<_> = (0..5)
            .map(|i| candidate(&[(i, 1.0 + i as f64)], Key::Tab))
            .collect();
        let draw = || {
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            (0..50)
                .map(|_| choose_weighted(&candidates, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
    }
}
