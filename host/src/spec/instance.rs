//! A sandboxed instance of the provider running one spec: no files, network,
//! environment or clock; a deadline per call and a memory cap.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use wasmtime::{Caller, Linker, Memory, Store, Trap, TypedFunc};
use wasmtime_wasi::p1::WasiP1Ctx;

use super::module::SpecModule;
use super::provider;
use super::query::{self, QueryKind};
use super::sourcemap::SourceMap;
use crate::action::{Action, ActionTree, Candidate, PathStep};
use crate::state::State;
use crate::wasm::{self, FixedClock, MemoryCap};
use uatu_device::model::Node;

/// What a spec instance may use.
#[derive(Debug, Clone, Copy)]
pub struct SpecLimits {
    /// Wall time one call into the spec may take.
    pub deadline: Duration,
    /// The instance's linear memory cap, in bytes.
    pub memory: usize,
}

impl Default for SpecLimits {
    fn default() -> Self {
        SpecLimits {
            deadline: Duration::from_secs(2),
            memory: 256 << 20,
        }
    }
}

/// What the spec was doing when something went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Compiling the spec's script to bytecode inside the provider.
    Compiling,
    /// Running the spec's top-level code and describing its properties, predicates and extractors.
    Loading,
    /// The step with this index, outside any one user function.
    Step(u64),
    /// A step, inside one extractor, predicate or generator leaf.
    StepIn(u64, String),
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Phase::Compiling => f.write_str("compiling"),
            Phase::Loading => f.write_str("loading"),
            Phase::Step(n) => write!(f, "step {n}"),
            Phase::StepIn(n, what) => write!(f, "step {n}, in {what},"),
        }
    }
}

/// A failure of the spec as a whole (its own errors inside a step are in [`SpecStep`]),
/// naming the spec and what it was doing.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// One call into the spec ran longer than [`SpecLimits::deadline`] and was interrupted.
    #[error("spec {spec}: {phase} exceeded the deadline of {deadline:?} (an endless loop?)")]
    Deadline {
        /// The spec's source file.
        spec: String,
        /// What it was doing.
        phase: Phase,
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The spec's memory grew past [`SpecLimits::memory`].
    #[error("spec {spec}: {phase} exceeded the memory cap of {mib} MiB")]
    MemoryCap {
        /// The spec's source file.
        spec: String,
        /// What it was doing.
        phase: Phase,
        /// The cap, MiB.
        mib: usize,
    },
    /// The spec threw (at load: top-level code, or a property/generator that is invalid).
    #[error("spec {spec}: {phase} failed: {message}{}", if stack.is_empty() { String::new() } else { format!("\n{stack}") })]
    Thrown {
        /// The spec's source file.
        spec: String,
        /// What it was doing.
        phase: Phase,
        /// The thrown error's message.
        message: String,
        /// Its JavaScript stack, mapped to the spec's sources; may be empty.
        stack: String,
    },
    /// The JavaScript runtime itself trapped (a bug in the provider, or a resource it ran out of).
    #[error("spec {spec}: {phase}: the spec runtime trapped: {message}")]
    Trap {
        /// The spec's source file.
        spec: String,
        /// What it was doing.
        phase: Phase,
        /// The trap's description.
        message: String,
    },
    /// The provider answered something the host does not understand, or was used out
    /// of order (a step before the load): a mismatch between host and provider.
    #[error("spec {spec}: {phase}: {message}")]
    Protocol {
        /// The spec's source file.
        spec: String,
        /// What it was doing.
        phase: Phase,
        /// What was wrong.
        message: String,
    },
    /// The Wasm sandbox for the spec could not be created (engine, linker, instantiation).
    #[error("spec {spec}: setting up the sandbox: {message}")]
    Setup {
        /// The spec's source file.
        spec: String,
        /// Why.
        message: String,
    },
}

struct Host {
    wasi: WasiP1Ctx,
    limiter: MemoryCap,
    hierarchy: Node,
    answer: Vec<u8>,
    answers: Answers,
    phases: PhaseTimer,
}

/// Times the runtime's phases of a step from its `uatu_host.mark` calls: each
/// phase lasts from its mark to the next (the spec has no clock, the host does).
#[derive(Default)]
struct PhaseTimer {
    running: Option<(usize, Instant)>,
    spent: [Duration; GUEST_PHASES],
}

/// The runtime's phases: state, extractors, predicates, generators, result.
const GUEST_PHASES: usize = 5;

impl PhaseTimer {
    /// A step's call begins: the runtime receives its state first.
    fn start(&mut self) {
        self.spent = Default::default();
        self.running = Some((0, Instant::now()));
    }

    fn enter(&mut self, phase: u32) {
        let now = Instant::now();
        if let Some((running, since)) = self.running {
            self.spent[running] += now - since;
        }
        // Any code may call the mark; an unknown phase counts as the result.
        let phase = (phase as usize).min(GUEST_PHASES - 1);
        self.running = Some((phase, now));
    }

    fn stop(&mut self) {
        if let Some((running, since)) = self.running.take() {
            self.spent[running] += since.elapsed();
        }
    }
}

/// Where the wall time of the last [`SpecInstance::step`] went: the host's work
/// before and after the call, and the runtime's phases inside it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepTimings {
    /// Host: comparing the state with the previous step's and serialising what changed.
    pub send: Duration,
    /// Runtime: taking the state in (copy, `JSON.parse`, applying the snapshots).
    pub state: Duration,
    /// Runtime: the extractors.
    pub extractors: Duration,
    /// Runtime: the predicates.
    pub predicates: Duration,
    /// Runtime: the generators.
    pub generators: Duration,
    /// Runtime: serialising the results and handing them out.
    pub result: Duration,
    /// Host: parsing the results, expanding `taps`/`swipes`, mapping error stacks.
    pub receive: Duration,
}

/// The query answers the runtime holds, kept in step with its own cache: those
/// given since the hierarchy last changed, and those of the screen before. A
/// query whose answer is the same as on the screen before is answered with
/// [`SAME_ANSWER`], so the runtime reuses the elements it parsed then (a typed
/// character changes one field, not the lists around it).
#[derive(Default)]
struct Answers {
    current: HashMap<(u32, String), Vec<u8>>,
    previous: HashMap<(u32, String), Vec<u8>>,
}

impl Answers {
    /// Called when the hierarchy changed; the runtime does the same.
    fn new_screen(&mut self) {
        self.previous = std::mem::take(&mut self.current);
    }

    /// What to send for `answer`: itself, or [`SAME_ANSWER`] unless `full`.
    fn reply(&mut self, key: (u32, String), answer: Vec<u8>, full: bool) -> Vec<u8> {
        let same = !full && self.previous.get(&key) == Some(&answer);
        self.current.insert(key, answer.clone());
        if same { SAME_ANSWER.to_vec() } else { answer }
    }
}

/// Never a JSON answer (those are arrays); see [`Answers`].
const SAME_ANSWER: &[u8] = b"=";
/// Added to a query kind by the runtime when it needs the answer in full.
const FULL_ANSWER: u32 = 16;

/// One description of a spec, as returned by its load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecDescription {
    /// Property name → formula (the JSON of `crate::ltl::Formula`), in the spec's order.
    pub properties: Vec<(String, serde_json::Value)>,
    /// Predicate id → where it was written (`spec.ts:line:col`).
    pub predicates: Vec<String>,
    /// Extractor names and where each was written.
    pub extractors: Vec<(String, String)>,
    /// What the spec's `setup` export asks to run before exploring, and again after
    /// every relaunch or data clear; `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
}

/// A spec's `setup` export, as the engine runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Setup {
    /// A list of actions: dispatched in order, each once.
    Actions(Vec<Action>),
    /// A generator: the root of a second tree at this place of the action tree. The
    /// engine draws from it (as from the root, [`SpecInstance::offer`]) one action a
    /// step until it offers nothing, then explores.
    Generator {
        /// The setup tree's root place.
        place: usize,
    },
}

/// The `setup` of the runtime's description.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum RawSetup {
    Actions(Vec<serde_json::Value>),
    Place(usize),
}

/// A predicate's value at one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PredicateValue {
    /// The predicate returned this value.
    Value(bool),
    /// The predicate threw; it counts as false.
    Error {
        /// What it threw.
        error: JsError,
    },
    /// The predicate was not run: no property still checked refers to it
    /// ([`SpecInstance::evaluate_only`]).
    Skipped,
}

impl PredicateValue {
    /// A predicate that threw counts as false.
    pub fn holds(&self) -> bool {
        matches!(self, PredicateValue::Value(true))
    }
}

/// An error thrown by spec code, with its stack mapped to the sources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsError {
    /// The error's message.
    pub message: String,
    /// The JavaScript stack, mapped to the spec's sources.
    pub stack: String,
    /// The first position in the user's spec (not in `@uatu/spec`), e.g. `spec.ts:12:5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// A generator that threw during a step; its actions were skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratorError {
    /// The generator's position in the spec's action tree.
    pub path: Vec<PathStep>,
    /// The error's message.
    pub message: String,
    /// The JavaScript stack, mapped to the spec's sources.
    pub stack: String,
    /// The first position in the user's spec, e.g. `spec.ts:12:5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// An extractor that threw during a step; its value is `null` for that step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractorError {
    /// The extractor's name.
    pub name: String,
    /// The error's message.
    pub message: String,
    /// The JavaScript stack, mapped to the spec's sources.
    pub stack: String,
    /// The first position in the user's spec, e.g. `spec.ts:12:5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// Everything one spec step produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecStep {
    /// By predicate id.
    pub predicates: Vec<PredicateValue>,
    /// Extractor name → its current value: shared with the instance, which keeps
    /// them for the next step (copied only if a step's values are still held then).
    /// Empty when [`SpecInstance::set_extractor_values`] turned them off.
    pub extractors: Arc<serde_json::Map<String, serde_json::Value>>,
    /// The extractors that threw.
    pub extractor_errors: Vec<ExtractorError>,
    /// Every action the spec's generators offered, with its place in the action tree.
    pub candidates: Vec<Candidate>,
    /// The generators that threw.
    pub generator_errors: Vec<GeneratorError>,
}

/// A running spec.
pub struct SpecInstance {
    spec: String,
    store: Store<Host>,
    memory: Memory,
    input: TypedFunc<u32, u32>,
    compile: TypedFunc<u32, u32>,
    load: TypedFunc<(u32, u32, u32), u32>,
    step: TypedFunc<u32, u32>,
    generate: TypedFunc<u32, u32>,
    doing: Option<TypedFunc<(), i32>>,
    limits: SpecLimits,
    source_map: SourceMap,
    /// The state JSON without its hierarchy, reused between steps.
    buffer: Vec<u8>,
    /// The snapshots as the runtime last received them.
    sent_snapshots: serde_json::Map<String, serde_json::Value>,
    /// The screen size the runtime last received.
    sent_screen: Option<uatu_device::model::ScreenSize>,
    /// Every extractor's value as of the last step (the runtime sends only changes).
    extracted: Arc<serde_json::Map<String, serde_json::Value>>,
    /// The spec's action tree (the runtime names candidates by place).
    tree: Arc<ActionTree>,
    description: Option<SpecDescription>,
    broken: bool,
    timings: StepTimings,
    /// Whether a step runs the generators ([`SpecInstance::set_generators`]).
    generators: bool,
    /// Whether a step returns the extractors' values ([`SpecInstance::set_extractor_values`]).
    extractor_values: bool,
    /// The step index of the last step that ran, for [`SpecInstance::offer`].
    last_step: Option<u64>,
    /// The predicates not to run from the next step on, when that changed since the
    /// last step ([`SpecInstance::evaluate_only`]); the runtime keeps the list.
    skip_predicates: Option<Vec<u32>>,
}

const STATUS_OK: u32 = 0;
const STATUS_JS_ERROR: u32 = 1;

#[derive(Deserialize)]
struct RawError {
    message: String,
    #[serde(default)]
    stack: String,
}

#[derive(Deserialize)]
struct RawDescription {
    properties: Vec<RawProperty>,
    predicates: Vec<RawLocated>,
    extractors: Vec<RawNamed>,
    /// Every place of the action tree, by number: its path from the root. A `setup`
    /// generator's tree follows the root's, its own root's path empty again.
    places: Vec<Vec<PathStep>>,
    #[serde(default)]
    setup: Option<RawSetup>,
}
#[derive(Deserialize)]
struct RawProperty {
    name: String,
    formula: serde_json::Value,
}
#[derive(Deserialize)]
struct RawLocated {
    stack: String,
}
#[derive(Deserialize)]
struct RawNamed {
    name: String,
    stack: String,
}

/// What the runtime's `step` returns; empty lists are left out.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawStep {
    /// One character per predicate: `1` held, `0` did not, `-` not run, `!` threw (its
    /// error in `predicate_errors`). A string crosses out of QuickJS far more cheaply
    /// than a list of values: every predicate of every step crosses.
    predicates: String,
    #[serde(default)]
    predicate_errors: Vec<RawPredicateError>,
    #[serde(default)]
    extractors: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    extractor_errors: Vec<ExtractorError>,
    /// `[place, action]`, or `[place, "taps" | "swipes"]` for the host to expand.
    #[serde(default)]
    candidates: Vec<(usize, serde_json::Value)>,
    #[serde(default)]
    generator_errors: Vec<RawGeneratorError>,
}

#[derive(Deserialize)]
struct RawPredicateError {
    id: usize,
    message: String,
    #[serde(default)]
    stack: String,
}

/// What `generate` returns: the candidates of one branch of the action tree.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOffer {
    candidates: Vec<(usize, serde_json::Value)>,
    #[serde(default)]
    generator_errors: Vec<RawGeneratorError>,
}

/// The candidates of one branch of the action tree, asked for after a step
/// ([`SpecInstance::offer`]), and the generators in it that threw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Offer {
    /// The actions the branch's generators offered, with their places.
    pub candidates: Vec<Candidate>,
    /// The generators of the branch that threw.
    pub generator_errors: Vec<GeneratorError>,
}

#[derive(Deserialize)]
struct RawGeneratorError {
    place: usize,
    message: String,
    #[serde(default)]
    stack: String,
}

/// The JS state: everything but the hierarchy (queried through the host), and of
/// the snapshots only what changed since the previous step. Parsing JSON into
/// QuickJS objects is most of a step's cost (≈ 30 µs per KB), and most snapshots
/// stay the same from one step to the next.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsState<'a> {
    step: u64,
    time: u64,
    /// The screen's size when it differs from the last step's (the runtime keeps it).
    #[serde(skip_serializing_if = "Option::is_none")]
    screen: Option<&'a uatu_device::model::ScreenSize>,
    /// The snapshots whose value differs from the previous step's.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    snapshots: &'a BTreeMap<&'a str, &'a serde_json::Value>,
    /// The snapshots the previous step had and this one has not.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    removed_snapshots: &'a [String],
    /// Whether the hierarchy differs from the previous step's (the runtime then
    /// drops the query answers it keeps).
    hierarchy_changed: bool,
    // Empty lists are left out (most steps log nothing): each value sent is an
    // object the runtime builds.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    logs: &'a [uatu_device::model::LogEntry],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    exceptions: &'a [uatu_device::model::ExceptionInfo],
    last_action: &'a Option<crate::action::ResolvedAction>,
    /// The focused window, from a device that can tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<&'a uatu_device::model::Window>,
    /// Whether the generators run (`false`: only extractors and predicates).
    generate: bool,
    /// Whether the extractors' changed values come back (`false`: none do).
    extractor_values: bool,
    /// The predicates not to run from this step on, when that changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    skip_predicates: Option<&'a [u32]>,
}

impl SpecInstance {
    /// A fresh sandbox for `module`, not yet loaded (see [`SpecInstance::load`]).
    pub fn new(module: &SpecModule, limits: SpecLimits) -> Result<SpecInstance, SpecError> {
        let spec = module.source.clone();
        let source_map = SourceMap::parse(&module.source_map).unwrap_or_default();
        let mut instance = SpecInstance::sandbox(&spec, limits, source_map)?;
        instance.description = None;
        Ok(instance)
    }

    fn sandbox(spec: &str, limits: SpecLimits, source_map: SourceMap) -> Result<SpecInstance, SpecError> {
        let setup = |message: String| SpecError::Setup {
            spec: spec.to_string(),
            message,
        };
        let engine = wasm::engine().map_err(|e| setup(e.to_string()))?;
        let module = provider::module().map_err(|e| setup(e.to_string()))?;
        // No preopens, arguments, environment or inherited stdio; fixed clocks and
        // randomness, so nothing outside the state can reach the spec.
        let wasi = wasmtime_wasi::WasiCtxBuilder::new()
            .wall_clock(FixedClock)
            .monotonic_clock(FixedClock)
            .secure_random(wasmtime_wasi::random::Deterministic::new(vec![7, 3, 5, 1]))
            .insecure_random(wasmtime_wasi::random::Deterministic::new(vec![2, 4, 6, 8]))
            .insecure_random_seed(0)
            .build_p1();
        let host = Host {
            wasi,
            limiter: MemoryCap::new(limits.memory),
            hierarchy: Node::default(),
            answer: Vec::new(),
            answers: Answers::default(),
            phases: PhaseTimer::default(),
        };
        let mut store = Store::new(engine, host);
        store.limiter(|host| &mut host.limiter);
        store.set_epoch_deadline(wasm::deadline_ticks(limits.deadline));
        store.epoch_deadline_trap();
        let mut linker: Linker<Host> = Linker::new(engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |host| &mut host.wasi)
            .map_err(|e| setup(e.to_string()))?;
        linker
            .func_wrap(
                "uatu_host",
                "query",
                |mut caller: Caller<'_, Host>, kind: u32, ptr: u32, len: u32| -> u32 {
                    let selector = read_memory(&mut caller, ptr, len).unwrap_or_default();
                    let selector = String::from_utf8_lossy(&selector).into_owned();
                    let full = kind & FULL_ANSWER != 0;
                    let kind = kind & !FULL_ANSWER;
                    let answer = match QueryKind::from_code(kind) {
                        Some(query_kind) => query::answer(&caller.data().hierarchy, query_kind, &selector),
                        None => b"[]".to_vec(),
                    };
                    let host = caller.data_mut();
                    host.answer = host.answers.reply((kind, selector), answer, full);
                    host.answer.len() as u32
                },
            )
            .map_err(|e| setup(e.to_string()))?;
        linker
            .func_wrap("uatu_host", "mark", |mut caller: Caller<'_, Host>, phase: u32| {
                caller.data_mut().phases.enter(phase);
            })
            .map_err(|e| setup(e.to_string()))?;
        linker
            .func_wrap("uatu_host", "take", |mut caller: Caller<'_, Host>, dst: u32| {
                let answer = std::mem::take(&mut caller.data_mut().answer);
                if let Some(memory) = caller.get_export("memory").and_then(|e| e.into_memory()) {
                    let _ = memory.write(&mut caller, dst as usize, &answer);
                }
            })
            .map_err(|e| setup(e.to_string()))?;
        let instance = linker
            .instantiate(&mut store, module)
            .map_err(|e| setup(e.to_string()))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| setup("the provider has no memory".into()))?;
        let func = |name: &str| setup(format!("the provider lacks `{name}`"));
        let input = instance
            .get_typed_func(&mut store, "uatu_input")
            .map_err(|_| func("uatu_input"))?;
        let compile = instance
            .get_typed_func(&mut store, "uatu_compile")
            .map_err(|_| func("uatu_compile"))?;
        let load = instance
            .get_typed_func(&mut store, "uatu_load")
            .map_err(|_| func("uatu_load"))?;
        let step = instance
            .get_typed_func(&mut store, "uatu_step")
            .map_err(|_| func("uatu_step"))?;
        let generate = instance
            .get_typed_func(&mut store, "uatu_generate")
            .map_err(|_| func("uatu_generate"))?;
        let doing = instance.get_typed_func(&mut store, "uatu_doing").ok();
        Ok(SpecInstance {
            spec: spec.to_string(),
            store,
            memory,
            input,
            compile,
            load,
            step,
            generate,
            doing,
            limits,
            source_map,
            buffer: Vec::new(),
            sent_snapshots: serde_json::Map::new(),
            sent_screen: None,
            extracted: Arc::default(),
            tree: Arc::default(),
            description: None,
            broken: false,
            timings: StepTimings::default(),
            generators: true,
            extractor_values: true,
            last_step: None,
            skip_predicates: None,
        })
    }

    /// Compiles a bundled script to QuickJS bytecode (used by `uatu build`).
    pub fn compile_script(spec: &str, script: &str, source_map: &str) -> Result<Vec<u8>, SpecError> {
        let map = SourceMap::parse(source_map).unwrap_or_default();
        let mut instance = SpecInstance::sandbox(spec, SpecLimits::default(), map)?;
        let compile = instance.compile.clone();
        let (status, output) = instance.call(Phase::Compiling, script.as_bytes(), |store, len| {
            compile.call(store, len)
        })?;
        match status {
            STATUS_OK => Ok(output),
            STATUS_JS_ERROR => Err(instance.thrown(Phase::Compiling, &output)),
            _ => Err(instance.protocol(Phase::Compiling, String::from_utf8_lossy(&output).into_owned())),
        }
    }

    /// Evaluates the spec once, seeding its randomness, and checks what it exports.
    pub fn load(&mut self, module: &SpecModule, seed: u64) -> Result<&SpecDescription, SpecError> {
        let (hi, lo) = ((seed >> 32) as u32, seed as u32);
        let load = self.load.clone();
        let (status, output) = self.call(Phase::Loading, &module.bytecode, |store, len| {
            load.call(store, (len, hi, lo))
        })?;
        if status == STATUS_JS_ERROR {
            return Err(self.thrown(Phase::Loading, &output));
        }
        if status != STATUS_OK {
            return Err(self.protocol(Phase::Loading, String::from_utf8_lossy(&output).into_owned()));
        }
        if let Ok(serde_json::Value::Object(object)) = serde_json::from_slice::<serde_json::Value>(&output)
            && let Some(serde_json::Value::String(error)) = object.get("error")
        {
            return Err(self.protocol(Phase::Loading, error.clone()));
        }
        let raw: RawDescription = serde_json::from_slice(&output).map_err(|e| {
            self.protocol(
                Phase::Loading,
                format!("bad description from the spec runtime: {e}"),
            )
        })?;
        let description = SpecDescription {
            properties: raw.properties.into_iter().map(|p| (p.name, p.formula)).collect(),
            predicates: raw
                .predicates
                .iter()
                .map(|p| self.user_location(&p.stack).unwrap_or_else(|| self.spec.clone()))
                .collect(),
            extractors: raw
                .extractors
                .into_iter()
                .map(|e| {
                    let location = self.user_location(&e.stack).unwrap_or_else(|| self.spec.clone());
                    (e.name, location)
                })
                .collect(),
            setup: match raw.setup {
                None => None,
                Some(RawSetup::Place(place)) => Some(Setup::Generator { place }),
                Some(RawSetup::Actions(actions)) => Some(Setup::Actions(
                    actions
                        .iter()
                        .map(Action::parse)
                        .collect::<Result<_, _>>()
                        .map_err(|e| self.protocol(Phase::Loading, format!("setup: invalid action: {e}")))?,
                )),
            },
        };
        self.extracted = Arc::new(
            description
                .extractors
                .iter()
                .map(|(name, _)| (name.clone(), serde_json::Value::Null))
                .collect(),
        );
        self.tree = Arc::new(ActionTree::from_paths(raw.places));
        self.sent_snapshots.clear();
        self.sent_screen = None;
        Ok(self.description.insert(description))
    }

    /// Whether steps run every generator (the default). Without them a step offers
    /// no candidates and costs less: a replay, which dispatches recorded actions,
    /// needs only the extractors and predicates, and the built-in strategy asks for
    /// the branches it draws ([`SpecInstance::offer`]).
    pub fn set_generators(&mut self, on: bool) {
        self.generators = on;
    }

    /// Whether steps return the extractors' values (the default). `uatu check` records
    /// nothing and turns them off: the extractors all still run (predicates, generators
    /// and other extractors read them, and an extractor may keep state of its own), but
    /// their values are not written out, sent or parsed, and [`SpecStep::extractors`] is
    /// empty. Turned back on, the next step returns every value.
    pub fn set_extractor_values(&mut self, on: bool) {
        self.extractor_values = on;
    }

    /// Runs only the predicates in `needed` from the next step on: a predicate that no
    /// property still checked refers to (every property using it is violated, see
    /// [`crate::ltl::PropertySet::needed_predicates`]) is not run, and its value is
    /// [`PredicateValue::Skipped`]. Every predicate runs until this is called.
    pub fn evaluate_only(&mut self, needed: &BTreeSet<u32>) {
        let count = self.description.as_ref().map_or(0, |d| d.predicates.len());
        let skipped = (0..count as u32).filter(|id| !needed.contains(id)).collect();
        self.skip_predicates = Some(skipped);
    }

    /// The spec's action tree, as numbered at load (empty before it).
    pub fn action_tree(&self) -> Arc<ActionTree> {
        Arc::clone(&self.tree)
    }

    /// The candidates of the branch of the action tree at `place`, over the state of
    /// the last [`SpecInstance::step`]: its generators run now, with the same
    /// randomness they would have drawn from inside the step.
    pub fn offer(&mut self, place: usize) -> Result<Offer, SpecError> {
        let Some(step) = self.last_step else {
            return Err(self.protocol(Phase::Loading, "candidates asked for before any step".into()));
        };
        let phase = Phase::Step(step);
        let place = u32::try_from(place)
            .ok()
            .filter(|&place| (place as usize) < self.tree.len())
            .ok_or_else(|| {
                self.protocol(
                    phase.clone(),
                    format!("no place {place} in an action tree of {}", self.tree.len()),
                )
            })?;
        let generate = self.generate.clone();
        let called = self.call(phase.clone(), &[], |store, _| generate.call(store, place))?;
        let output = self.answered(&phase, called)?;
        // Nothing at all (no candidate, no error) comes back as no output.
        if output.is_empty() {
            return Ok(Offer::default());
        }
        let raw: RawOffer = serde_json::from_slice(&output).map_err(|e| {
            self.protocol(
                phase.clone(),
                format!("bad candidates from the spec runtime: {e}"),
            )
        })?;
        // The hierarchy the host keeps is the last step's (`taps` expand over it).
        self.candidates(
            &phase,
            &self.store.data().hierarchy,
            raw.candidates,
            raw.generator_errors,
        )
    }

    /// The description returned by [`SpecInstance::load`].
    pub fn describe(&self) -> Option<&SpecDescription> {
        self.description.as_ref()
    }

    /// Where the time of the last step went.
    pub fn timings(&self) -> StepTimings {
        self.timings
    }

    /// One step: extractors, then predicates, then generators, in one call.
    pub fn step(&mut self, state: &State) -> Result<SpecStep, SpecError> {
        let started = Instant::now();
        let phase = Phase::Step(state.step);
        if self.description.is_none() {
            return Err(self.protocol(phase, "the spec was not loaded".into()));
        }
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        let hierarchy_changed = self.store.data().hierarchy != state.hierarchy;
        let changed: BTreeMap<&str, &serde_json::Value> = state
            .snapshots
            .iter()
            .filter(|(key, value)| self.sent_snapshots.get(*key) != Some(*value))
            .map(|(key, value)| (key.as_str(), value))
            .collect();
        let removed: Vec<String> = self
            .sent_snapshots
            .keys()
            .filter(|key| !state.snapshots.contains_key(*key))
            .cloned()
            .collect();
        let js_state = JsState {
            step: state.step,
            time: state.time,
            screen: (self.sent_screen != Some(state.screen)).then_some(&state.screen),
            snapshots: &changed,
            removed_snapshots: &removed,
            hierarchy_changed,
            logs: &state.logs,
            exceptions: &state.exceptions,
            last_action: &state.last_action,
            window: state.window.as_ref(),
            generate: self.generators,
            extractor_values: self.extractor_values,
            skip_predicates: self.skip_predicates.as_deref(),
        };
        serde_json::to_writer(&mut buffer, &js_state)
            .map_err(|e| self.protocol(phase.clone(), e.to_string()))?;
        // The runtime applies these at the start of its step, whatever follows.
        self.skip_predicates = None;
        self.sent_screen = Some(state.screen);
        for key in &removed {
            self.sent_snapshots.remove(key);
        }
        for (key, value) in changed {
            self.sent_snapshots.insert(key.to_string(), value.clone());
        }
        if hierarchy_changed {
            let host = self.store.data_mut();
            host.hierarchy = state.hierarchy.clone();
            host.answers.new_screen();
        }
        let step_fn = self.step.clone();
        let called = Instant::now();
        self.timings.send = called - started;
        self.store.data_mut().phases.start();
        let result = self.call(phase.clone(), &buffer, |store, len| step_fn.call(store, len));
        let returned = Instant::now();
        let phases = &mut self.store.data_mut().phases;
        phases.stop();
        let [state_in, extractors, predicates, generators, result_out] = phases.spent;
        self.timings = StepTimings {
            state: state_in,
            extractors,
            predicates,
            generators,
            result: result_out,
            ..self.timings
        };
        self.buffer = buffer;
        let output = self.answered(&phase, result?)?;
        let raw: RawStep = serde_json::from_slice(&output).map_err(|e| {
            self.protocol(
                phase.clone(),
                format!("bad step result from the spec runtime: {e}"),
            )
        })?;
        self.last_step = Some(state.step);
        let extractors = if self.extractor_values {
            Arc::make_mut(&mut self.extracted).extend(raw.extractors);
            Arc::clone(&self.extracted)
        } else {
            Arc::default()
        };
        let predicates = predicate_values(&raw.predicates, raw.predicate_errors).map_err(|problem| {
            self.protocol(
                phase.clone(),
                format!("bad predicate values from the spec runtime: {problem}"),
            )
        })?;
        let offer = self.candidates(&phase, &state.hierarchy, raw.candidates, raw.generator_errors)?;
        let mut step = SpecStep {
            predicates,
            extractors,
            extractor_errors: raw.extractor_errors,
            candidates: offer.candidates,
            generator_errors: offer.generator_errors,
        };
        for value in &mut step.predicates {
            if let PredicateValue::Error { error } = value {
                error.stack = self.source_map.map_text(&error.stack, super::SCRIPT_NAME);
                error.location = user_frame(&error.stack);
            }
        }
        for error in &mut step.extractor_errors {
            error.stack = self.source_map.map_text(&error.stack, super::SCRIPT_NAME);
            error.location = user_frame(&error.stack);
        }
        self.timings.receive = returned.elapsed();
        Ok(step)
    }

    /// The output of a step's call that returned `status`; a JavaScript error or a
    /// provider error otherwise, after which the instance is unusable (the runtime's
    /// view of the snapshots and extractors may be ahead of the host's).
    fn answered(&mut self, phase: &Phase, (status, output): (u32, Vec<u8>)) -> Result<Vec<u8>, SpecError> {
        match status {
            STATUS_OK => Ok(output),
            STATUS_JS_ERROR => {
                self.broken = true;
                Err(self.thrown(phase.clone(), &output))
            }
            _ => {
                self.broken = true;
                Err(self.protocol(phase.clone(), String::from_utf8_lossy(&output).into_owned()))
            }
        }
    }

    /// The runtime's candidates and generator errors, named by place, as actions
    /// with their paths: `taps`/`swipes` expanded over `hierarchy`, an invalid
    /// action reported as its generator's error, stacks mapped to the sources.
    fn candidates(
        &self,
        phase: &Phase,
        hierarchy: &Node,
        raw_candidates: Vec<(usize, serde_json::Value)>,
        raw_errors: Vec<RawGeneratorError>,
    ) -> Result<Offer, SpecError> {
        let mut offer = Offer {
            candidates: Vec::with_capacity(raw_candidates.len()),
            generator_errors: Vec::with_capacity(raw_errors.len()),
        };
        for error in raw_errors {
            let path = self.place(phase, error.place)?;
            let stack = self.source_map.map_text(&error.stack, super::SCRIPT_NAME);
            offer.generator_errors.push(GeneratorError {
                path,
                message: error.message,
                location: user_frame(&stack),
                stack,
            });
        }
        for (place, offered) in raw_candidates {
            let path = self.place(phase, place)?;
            if let serde_json::Value::String(kind) = &offered {
                query::expand(hierarchy, kind, &path, &mut offer.candidates);
                continue;
            }
            match Action::parse(&offered) {
                Ok(action) => offer.candidates.push(Candidate { path, action }),
                Err(e) => offer.generator_errors.push(GeneratorError {
                    path,
                    message: format!("invalid action: {e}"),
                    stack: String::new(),
                    location: None,
                }),
            }
        }
        Ok(offer)
    }

    /// The path of the action tree's place `place`, as the runtime numbered them at load.
    fn place(&self, phase: &Phase, place: usize) -> Result<Vec<PathStep>, SpecError> {
        match self.tree.place(place) {
            Some(node) => Ok(node.path.clone()),
            None => Err(self.protocol(
                phase.clone(),
                format!(
                    "the spec runtime named place {place} of an action tree of {}",
                    self.tree.len()
                ),
            )),
        }
    }

    fn call<F>(&mut self, phase: Phase, input: &[u8], f: F) -> Result<(u32, Vec<u8>), SpecError>
    where
        F: FnOnce(&mut Store<Host>, u32) -> wasmtime::Result<u32>,
    {
        if self.broken {
            return Err(self.protocol(
                phase,
                "the spec instance is unusable after an earlier failure".into(),
            ));
        }
        self.store
            .set_epoch_deadline(wasm::deadline_ticks(self.limits.deadline));
        let outcome = exchange(&mut self.store, self.memory, &self.input, input, f);
        let memory_hit = std::mem::take(&mut self.store.data_mut().limiter.exceeded);
        let phase = match (&outcome, memory_hit, &phase) {
            (Ok(_), false, _) => phase,
            (_, _, Phase::Step(n)) => match self.doing() {
                Some(what) => Phase::StepIn(*n, what),
                None => phase,
            },
            _ => phase,
        };
        match outcome {
            Ok((status, output)) if !memory_hit => Ok((status, output)),
            Ok(_) => {
                self.broken = true;
                Err(SpecError::MemoryCap {
                    spec: self.spec.clone(),
                    phase,
                    mib: self.limits.memory >> 20,
                })
            }
            Err(error) => {
                self.broken = true;
                if matches!(error.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
                    Err(SpecError::Deadline {
                        spec: self.spec.clone(),
                        phase,
                        deadline: self.limits.deadline,
                    })
                } else if memory_hit {
                    Err(SpecError::MemoryCap {
                        spec: self.spec.clone(),
                        phase,
                        mib: self.limits.memory >> 20,
                    })
                } else {
                    Err(SpecError::Trap {
                        spec: self.spec.clone(),
                        phase,
                        message: format!("{error:#}"),
                    })
                }
            }
        }
    }

    /// What the runtime was running when a call failed, e.g. `extractor route (spec.ts:3:15)`.
    fn doing(&mut self) -> Option<String> {
        let func = self.doing.clone()?;
        self.store
            .set_epoch_deadline(wasm::deadline_ticks(Duration::from_millis(100)));
        let code = func.call(&mut self.store, ()).ok()?;
        let description = self.description.as_ref()?;
        let index = (code % 1_000_000) as usize;
        match code / 1_000_000 {
            1 => description
                .extractors
                .get(index)
                .map(|(name, at)| format!("extractor {name} ({at})")),
            2 => description
                .predicates
                .get(index)
                .map(|at| format!("the predicate at {at}")),
            3 => self
                .tree
                .place(index)
                .map(|place| format!("generator {}", crate::action::path_label(&place.path))),
            _ => None,
        }
    }

    fn thrown(&self, phase: Phase, output: &[u8]) -> SpecError {
        match serde_json::from_slice::<RawError>(output) {
            Ok(raw) => {
                let stack = self.source_map.map_text(&raw.stack, super::SCRIPT_NAME);
                let message = match user_frame(&stack) {
                    Some(location) => format!("{location}: {}", raw.message),
                    None => raw.message,
                };
                SpecError::Thrown {
                    spec: self.spec.clone(),
                    phase,
                    message,
                    stack,
                }
            }
            Err(_) => self.protocol(phase, String::from_utf8_lossy(output).into_owned()),
        }
    }

    fn protocol(&self, phase: Phase, message: String) -> SpecError {
        SpecError::Protocol {
            spec: self.spec.clone(),
            phase,
            message,
        }
    }

    /// Where spec code was written: the first frame in the user's files, else
    /// (for the library's own properties) the first frame in `@uatu/spec`.
    fn user_location(&self, stack: &str) -> Option<String> {
        let mapped = self.source_map.map_text(stack, super::SCRIPT_NAME);
        user_frame(&mapped).or_else(|| {
            frames(&mapped)
                .into_iter()
                .find(|f| !f.starts_with("@uatu/spec/index.ts"))
        })
    }
}

/// Writes `input` into the provider (if any), runs `f`, and reads its (status, output).
fn exchange<F>(
    store: &mut Store<Host>,
    memory: Memory,
    input_fn: &TypedFunc<u32, u32>,
    input: &[u8],
    f: F,
) -> wasmtime::Result<(u32, Vec<u8>)>
where
    F: FnOnce(&mut Store<Host>, u32) -> wasmtime::Result<u32>,
{
    let len = u32::try_from(input.len()).map_err(|_| wasmtime::Error::msg("input too large"))?;
    if !input.is_empty() {
        let ptr = input_fn.call(&mut *store, len)?;
        memory.write(&mut *store, ptr as usize, input)?;
    }
    let area = f(store, len)?;
    let mut words = [0u8; 12];
    memory.read(&*store, area as usize, &mut words)?;
    let word =
        |i: usize| u32::from_le_bytes([words[i * 4], words[i * 4 + 1], words[i * 4 + 2], words[i * 4 + 3]]);
    let mut output = vec![0u8; word(2) as usize];
    memory.read(&*store, word(1) as usize, &mut output)?;
    Ok((word(0), output))
}

/// The first `file:line:col` of a mapped stack that is the user's code, not `@uatu/spec`.
fn user_frame(stack: &str) -> Option<String> {
    frames(stack)
        .into_iter()
        .find(|frame| !frame.starts_with("@uatu/spec"))
}

/// Every `file:line:col` of a stack, innermost first.
fn frames(stack: &str) -> Vec<String> {
    stack
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let inner = line
                .rsplit_once('(')
                .map(|(_, r)| r.trim_end_matches(')'))
                .unwrap_or(line);
            let inner = inner.strip_prefix("at ").unwrap_or(inner).trim();
            let mut parts = inner.rsplitn(3, ':');
            let (col, row, file) = (parts.next()?, parts.next()?, parts.next()?);
            (col.parse::<u32>().is_ok() && row.parse::<u32>().is_ok() && !file.is_empty())
                .then(|| inner.to_string())
        })
        .collect()
}

fn read_memory(caller: &mut Caller<'_, Host>, ptr: u32, len: u32) -> Option<Vec<u8>> {
    let memory = caller.get_export("memory")?.into_memory()?;
    let mut bytes = vec![0u8; len as usize];
    memory.read(&caller, ptr as usize, &mut bytes).ok()?;
    Some(bytes)
}

/// The predicates' values from the runtime's string of them (see [`RawStep`]), or what
/// is wrong with it.
fn predicate_values(
    codes: &str,
    errors: Vec<RawPredicateError>,
) -> Result<Vec<PredicateValue>, BadPredicates> {
    let mut values = codes
        .bytes()
        .map(|code| match code {
            b'1' => Ok(PredicateValue::Value(true)),
            b'0' => Ok(PredicateValue::Value(false)),
            b'-' => Ok(PredicateValue::Skipped),
            // Filled in from the errors below.
            b'!' => Ok(PredicateValue::Value(false)),
            other => Err(BadPredicates::Code(other as char)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let thrown = codes.bytes().filter(|&code| code == b'!').count();
    if errors.len() != thrown {
        return Err(BadPredicates::Errors {
            thrown,
            errors: errors.len(),
        });
    }
    for RawPredicateError { id, message, stack } in errors {
        match (codes.as_bytes().get(id), values.get_mut(id)) {
            (Some(b'!'), Some(value)) => {
                *value = PredicateValue::Error {
                    error: JsError {
                        message,
                        stack,
                        location: None,
                    },
                }
            }
            _ => return Err(BadPredicates::NotThrown(id)),
        }
    }
    Ok(values)
}

/// What is wrong with a step's predicate values.
#[derive(Debug, thiserror::Error)]
enum BadPredicates {
    #[error("`{0}` is not a predicate's value")]
    Code(char),
    #[error("{thrown} predicates threw, but {errors} errors came with them")]
    Errors { thrown: usize, errors: usize },
    #[error("an error came for predicate {0}, which did not throw")]
    NotThrown(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thrown(id: usize) -> RawPredicateError {
        RawPredicateError {
            id,
            message: format!("TypeError: {id}"),
            stack: "at spec.js:3:5".into(),
        }
    }

    #[test]
    fn predicate_values_are_read_from_one_character_each_with_the_errors_apart() {
        let values = predicate_values("10-!", vec![thrown(3)]).expect("reads");
        assert_eq!(values.len(), 4);
        assert_eq!(
            values[..3],
            [
                PredicateValue::Value(true),
                PredicateValue::Value(false),
                PredicateValue::Skipped
            ]
        );
        assert!(
            matches!(&values[3], PredicateValue::Error { error } if error.message == "TypeError: 3"),
            "{values:?}"
        );
        assert!(predicate_values("", vec![]).expect("none").is_empty());
    }

    #[test]
    fn predicate_values_that_do_not_add_up_are_refused() {
        for (codes, errors, problem) in [
            ("1x", vec![], "`x` is not a predicate's value"),
            ("1!", vec![], "1 predicates threw, but 0 errors came with them"),
            (
                "10",
                vec![thrown(1)],
                "0 predicates threw, but 1 errors came with them",
            ),
            (
                "!1",
                vec![thrown(1)],
                "an error came for predicate 1, which did not throw",
            ),
            (
                "!",
                vec![thrown(5)],
                "an error came for predicate 5, which did not throw",
            ),
        ] {
            let error = predicate_values(codes, errors).expect_err(codes);
            assert_eq!(error.to_string(), problem, "{codes}");
        }
    }
}
