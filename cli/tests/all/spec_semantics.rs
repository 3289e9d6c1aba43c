//! The semantics corpus (issue 19): recorded Folio runs replayed through the spec
//! step, the LTL monitors and the built-in strategy's draw, compared with a golden
//! that the code before the lazy spec step produced from the same runs.
//!
//! `cli/tests/corpus/<run>/` holds each run (recorded by `uatu run`, compact trace,
//! no screenshots); `cli/tests/corpus/golden.json` what replaying it gave: every
//! property's verdict and first violating step, and at every step the candidates
//! each generator leaf offered (as hashes) and the action the seeded draw chose.
//! Both were written by [`record_the_corpus`]; regenerating the golden with changed
//! code would only compare that code with itself.
//!
//! `uatu check` over each run must give the golden verdicts. Two ways of choosing
//! are checked against it: every generator at every step (what
//! a strategy plugin is given), which must give the golden exactly; and the
//! built-in draw that runs only the branches it draws, which draws other random
//! numbers (docs/running.md) and so must give the same verdicts, the same
//! candidates from every branch it ran, and a choice among the golden's branches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uatu::action::path_label;
use uatu::action::{Action, Candidate};
use uatu::run::strategy::{draw_on_demand, draw_on_screen};
use uatu::run::verify::{Verifier, predicate_values};
use uatu::spec::{SpecInstance, SpecLimits, SpecModule};
use uatu::trace::{TraceReader, read_meta};

const FOLIO: &str = "examples/folio/spec.ts";
const REFERENCE: &str = "examples/folio/reference-spec.ts";
/// `previous`, `next`, bounded (steps and time) and unbounded `eventually`.
const TEMPORAL: &str = "cli/tests/specs/temporal.ts";

/// The corpus: name, the spec that drove the run (and is replayed over it), seed, planted bugs.
const CORPUS: &[(&str, &str, u64, &str)] = &[
    ("folio-1-bugs", FOLIO, 1, "all"),
    ("folio-2-bugs", FOLIO, 2, "all"),
    ("folio-3-bugs", FOLIO, 3, "all"),
    ("folio-4-clean", FOLIO, 4, "none"),
    ("reference-1-bugs", REFERENCE, 1, "all"),
    ("reference-2-bugs", REFERENCE, 2, "all"),
    ("reference-3-clean", REFERENCE, 3, "none"),
    ("temporal-1-bugs", TEMPORAL, 1, "all"),
    ("temporal-2-bugs", TEMPORAL, 2, "all"),
    ("temporal-3-clean", TEMPORAL, 3, "none"),
];

/// Steps per recorded run: enough to sign in, add accounts and transactions, and
/// meet most planted bugs; few enough for the test command.
const STEPS: u64 = 60;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// What replaying one run gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Replayed {
    /// Property → (verdict, first violating step).
    verdicts: BTreeMap<String, (String, Option<u64>)>,
    steps: Vec<ReplayedStep>,
    /// How many leaves the spec's action tree has (not in the golden).
    #[serde(skip)]
    leaves_in_tree: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ReplayedStep {
    step: u64,
    /// Generator leaf (its path) → the hash of the candidates it offered, in order.
    leaves: BTreeMap<String, Offered>,
    /// The action the built-in strategy drew (leaf and action as JSON), if any.
    chosen: Option<String>,
}

/// A leaf's candidates, hashed in full and with the texts of `InputText` blanked:
/// the texts come from `from(...).generate()`, i.e. from the order in which
/// generators draw random numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Offered {
    full: String,
    shape: String,
}

fn hash(candidates: &[&Candidate]) -> String {
    let json = serde_json::to_vec(&candidates).expect("candidates serialise");
    hex::encode(&Sha256::digest(&json)[..6])
}

fn offered(candidates: &[&Candidate]) -> Offered {
    let blanked: Vec<Candidate> = candidates
        .iter()
        .map(|&candidate| {
            let mut candidate = candidate.clone();
            if let Action::InputText { text, .. } = &mut candidate.action {
                text.clear();
            }
            candidate
        })
        .collect();
    Offered {
        full: hash(candidates),
        shape: hash(&blanked.iter().collect::<Vec<_>>()),
    }
}

/// How a replay chooses its actions.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Choosing {
    /// Every generator runs at every step; the draw is over all candidates.
    AllCandidates,
    /// The draw asks for the branches it draws only (`uatu run` without a strategy plugin).
    OnDemand,
}

/// Replays `run` with `spec` (relative to the workspace) as `uatu run` evaluates a step.
fn replay(spec: &str, run: &Path, choosing: Choosing) -> Replayed {
    let spec = workspace().join(spec);
    let seed = read_meta::<uatu::devices::DeviceOptions>(run)
        .expect("meta.json")
        .seed;
    let module = SpecModule::load(&spec).expect("spec builds");
    let mut instance = SpecInstance::new(&module, SpecLimits::default()).expect("instance");
    instance.set_generators(choosing == Choosing::AllCandidates);
    let description = instance.load(&module, seed).expect("spec loads");
    let mut verifier = Verifier::for_spec(&spec, &description.properties).expect("properties");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut steps = Vec::new();
    let mut states = TraceReader::open(run).expect("trace").states();
    while let Some(record) = states.next() {
        let record = record.expect("record");
        if !record.evaluated {
            continue;
        }
        let step = instance.step(&record.state).expect("spec step");
        let (_, violations) = verifier.step(
            record.step,
            record.time,
            &predicate_values(&step),
            record.state.last_action.as_ref(),
        );
        // As `uatu run` and `uatu check` do: a violated property's predicates stop running.
        verifier.skip_decided_predicates(&violations, &mut instance);
        let (leaves, chosen) = match choosing {
            Choosing::AllCandidates => {
                let mut by_leaf: BTreeMap<String, Vec<&Candidate>> = BTreeMap::new();
                for candidate in &step.candidates {
                    by_leaf.entry(candidate.path_label()).or_default().push(candidate);
                }
                let leaves = by_leaf
                    .iter()
                    .map(|(leaf, candidates)| (leaf.clone(), offered(candidates)))
                    .collect();
                let chosen = draw_on_screen(step.candidates.clone(), &record.state.hierarchy, &mut rng);
                (leaves, chosen)
            }
            Choosing::OnDemand => {
                // Every branch the draw ran, the empty ones included.
                let tree = instance.action_tree();
                let mut leaves = BTreeMap::new();
                let chosen = draw_on_demand(&tree, &record.state.hierarchy, &mut rng, |place| {
                    let offer = instance.offer(place)?;
                    let leaf = path_label(&tree.place(place).expect("a place of the tree").path);
                    leaves.insert(leaf, offered(&offer.candidates.iter().collect::<Vec<_>>()));
                    Ok::<_, uatu::spec::SpecError>(offer.candidates)
                })
                .expect("offers");
                (leaves, chosen)
            }
        };
        let chosen = chosen.map(|action| serde_json::to_string(&action).expect("action serialises"));
        steps.push(ReplayedStep {
            step: record.step,
            leaves,
            chosen,
        });
    }
    let verdicts = verifier
        .summaries()
        .into_iter()
        .map(|summary| (summary.name, (summary.verdict, summary.first_violation_step)))
        .collect();
    let tree = instance.action_tree();
    let leaves_in_tree = (0..tree.len())
        .filter(|&place| tree.place(place).is_some_and(|node| node.children.is_empty()))
        .count();
    Replayed {
        verdicts,
        steps,
        leaves_in_tree,
    }
}

fn read_golden() -> BTreeMap<String, Replayed> {
    let path = corpus_dir().join("golden.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("golden.json parses")
}

#[test]
fn replaying_the_corpus_gives_the_golden_verdicts_candidates_and_choices() {
    let golden = read_golden();
    assert_eq!(golden.len(), CORPUS.len(), "one golden entry per corpus run");
    for &(name, spec, _, _) in CORPUS {
        let expected = &golden[name];
        let actual = replay(spec, &corpus_dir().join(name), Choosing::AllCandidates);
        assert_eq!(actual.verdicts, expected.verdicts, "{name}: verdicts");
        assert_eq!(actual.steps.len(), expected.steps.len(), "{name}: steps");
        for (actual, expected) in actual.steps.iter().zip(&expected.steps) {
            assert_eq!(actual, expected, "{name}: step {}", expected.step);
        }
    }
}

/// `uatu check` over each run (no generator runs, no extractor value comes back, the
/// states are read alone from the trace): the golden verdicts and first violations.
#[test]
fn checking_the_corpus_gives_the_golden_verdicts() {
    let golden = read_golden();
    for &(name, spec, _, _) in CORPUS {
        let (report, _) = uatu::run::check(&workspace().join(spec), &corpus_dir().join(name), false)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let verdicts: BTreeMap<String, (String, Option<u64>)> = report
            .properties
            .into_iter()
            .map(|summary| (summary.name, (summary.verdict, summary.first_violation_step)))
            .collect();
        assert_eq!(verdicts, golden[name].verdicts, "{name}: verdicts");
        assert_eq!(report.steps, golden[name].steps.len() as u64, "{name}: steps");
    }
}

/// The draw that runs only the branches it draws: the same verdicts; each branch
/// it ran offered what it offered when every generator ran (the texts drawn by
/// `from(...)` aside: fewer generators draw fewer random numbers), or nothing where
/// the golden has no candidate from it; the chosen action comes from a branch that
/// offered candidates; and the same seed chooses the same actions.
#[test]
fn drawing_on_demand_gives_the_golden_verdicts_and_the_same_candidates_from_the_branches_it_runs() {
    let golden = read_golden();
    let (mut branches_run, mut leaves_per_step) = (0, 0);
    for &(name, spec, _, _) in CORPUS {
        let expected = &golden[name];
        let actual = replay(spec, &corpus_dir().join(name), Choosing::OnDemand);
        assert_eq!(actual.verdicts, expected.verdicts, "{name}: verdicts");
        assert_eq!(actual.steps.len(), expected.steps.len(), "{name}: steps");
        for (actual, expected) in actual.steps.iter().zip(&expected.steps) {
            let at = format!("{name}: step {}", expected.step);
            for (leaf, offered) in &actual.leaves {
                branches_run += 1;
                match expected.leaves.get(leaf) {
                    Some(golden) => assert_eq!(offered.shape, golden.shape, "{at}: branch {leaf}"),
                    None => {
                        let none = self::offered(&[]);
                        assert_eq!(
                            offered, &none,
                            "{at}: branch {leaf} offered what the golden has not"
                        );
                    }
                }
            }
            assert_eq!(
                actual.chosen.is_some(),
                expected.chosen.is_some(),
                "{at}: whether an action was chosen"
            );
            if let Some(chosen) = &actual.chosen {
                let action: serde_json::Value = serde_json::from_str(chosen).expect("chosen action JSON");
                let generator = action["generator"]
                    .as_str()
                    .expect("the chosen action's generator");
                assert!(
                    expected.leaves.contains_key(generator),
                    "{at}: {generator} offered nothing in the golden"
                );
            }
        }
        leaves_per_step += actual.leaves_in_tree * actual.steps.len();
        let again = replay(spec, &corpus_dir().join(name), Choosing::OnDemand);
        assert_eq!(again, actual, "{name}: the same seed chose differently");
    }
    // The draw ran far fewer branches than every generator at every step.
    assert!(
        branches_run > 0 && branches_run * 2 < leaves_per_step,
        "{branches_run} branches run of {leaves_per_step}"
    );
}

/// The corpus is not trivial: runs violate properties and leave others passing,
/// and the draw had several leaves to choose from.
#[test]
fn the_corpus_covers_violations_passes_and_choices() {
    let golden = read_golden();
    let verdicts: Vec<&str> = golden
        .values()
        .flat_map(|run| run.verdicts.values().map(|(verdict, _)| verdict.as_str()))
        .collect();
    for verdict in ["violated", "passed", "inconclusive", "unmet"] {
        assert!(verdicts.contains(&verdict), "no {verdict} verdict in the corpus");
    }
    let choices = golden
        .values()
        .flat_map(|run| &run.steps)
        .filter(|step| step.leaves.len() > 1 && step.chosen.is_some())
        .count();
    assert!(
        choices > 100,
        "only {choices} steps with a choice among several leaves"
    );
}

/// Records the corpus runs with the `uatu` binary and writes the golden from them.
/// Run it only to grow the corpus, on the code the golden is meant to describe:
/// `UATU_RECORD_CORPUS=1 cargo test --workspace --test all record_the_corpus -- --ignored`
#[test]
#[ignore = "writes cli/tests/corpus; see its doc comment"]
fn record_the_corpus() {
    if std::env::var_os("UATU_RECORD_CORPUS").is_none() {
        return;
    }
    let mut golden = BTreeMap::new();
    for &(name, spec, seed, bugs) in CORPUS {
        let destination = corpus_dir().join(name);
        let _ = std::fs::remove_dir_all(&destination);
        let output = tempfile::tempdir().expect("temporary directory");
        let status = Command::new(env!("CARGO_BIN_EXE_uatu"))
            .arg("run")
            .arg("--spec")
            .arg(workspace().join(spec))
            .args([
                "--seed",
                &seed.to_string(),
                "--sim-bugs",
                bugs,
                "--sim-latency",
                "0",
            ])
            .args([
                "--no-screenshots",
                "--max-steps",
                &STEPS.to_string(),
                "--json",
                "--output",
            ])
            .arg(output.path())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("runs uatu");
        assert!(matches!(status.code(), Some(0 | 1)), "{name}: uatu run {status}");
        let run = std::fs::read_dir(output.path())
            .expect("output")
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| path.join("trace.jsonl").exists())
            .expect("a run directory");
        std::fs::create_dir_all(&destination).expect("corpus directory");
        for file in ["meta.json", "trace.jsonl", "hierarchies.jsonl", "summary.json"] {
            if run.join(file).exists() {
                std::fs::copy(run.join(file), destination.join(file)).expect("copies the run");
            }
        }
        golden.insert(
            name.to_string(),
            replay(spec, &destination, Choosing::AllCandidates),
        );
    }
    // One run per line: small, and a change shows which run it is in.
    let lines: Vec<String> = golden
        .iter()
        .map(|(name, replayed)| {
            let replayed = serde_json::to_string(replayed).expect("golden serialises");
            format!("{name:?}: {replayed}")
        })
        .collect();
    let json = format!("{{\n{}\n}}\n", lines.join(",\n"));
    std::fs::write(corpus_dir().join("golden.json"), json).expect("writes golden.json");
}
