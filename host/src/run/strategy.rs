//! The built-in strategy: a weighted-random walk down the spec's generator tree.
//!
//! At each level a child is drawn by its weight among the children that
//! offered at least one action this step (so a generator that yields nothing
//! is skipped and the draw is among the rest); at the generator that yielded
//! the actions, one is drawn uniformly.

use rand::Rng;

use crate::action::{Candidate, ResolvedAction};
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
        let total: f64 = children.iter().map(|(_, weight, _)| weight.max(0.0)).sum();
        let chosen = if total > 0.0 {
            let mut ticket = rng.random_range(0.0..total);
            children
                .iter()
                .position(|(_, weight, _)| {
                    ticket -= weight.max(0.0);
                    ticket < 0.0
                })
                .unwrap_or(children.len() - 1)
        } else {
            rng.random_range(0..children.len())
        };
        let (index, _, members) = children.swap_remove(chosen);
        if index.is_none() {
            return Some(members[rng.random_range(0..members.len())]);
        }
        group = members;
        depth += 1;
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

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
