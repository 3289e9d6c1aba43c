//! Reading `trace.jsonl`, full or compact, tolerating a run that was killed
//! mid-write or is still being written.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use uatu_device::model::Node;

use super::TraceError;
use super::delta::{Patch, apply, baseline, pointer_keys};
use super::record::{RecordedState, StepRecord};
use super::writer::{COMPACT_VERSION, HIERARCHIES_FILE, Header, TRACE_FILE};

/// Hierarchies kept parsed while reading (the least recently used dropped first): a
/// run revisits its screens, and building one again costs far more than a copy of
/// it (a Folio run of 2,000 steps changes hierarchy 1,663 times among 339 distinct
/// ones, each about 300 nodes).
const HIERARCHY_CACHE: usize = 128;

/// A map of at most `capacity` entries that drops the least recently used first.
struct RecentlyUsed<K, V> {
    entries: HashMap<K, (V, u64)>,
    uses: u64,
    capacity: usize,
}

impl<K: std::hash::Hash + Eq + Clone, V> RecentlyUsed<K, V> {
    fn new(capacity: usize) -> Self {
        RecentlyUsed {
            entries: HashMap::new(),
            uses: 0,
            capacity,
        }
    }

    fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.uses += 1;
        let uses = self.uses;
        self.entries.get_mut(key).map(|(value, used)| {
            *used = uses;
            &*value
        })
    }

    fn insert(&mut self, key: K, value: V) {
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        self.uses += 1;
        self.entries.insert(key, (value, self.uses));
    }
}

/// Streams the step records of a trace, one at a time, fully resolved: a
/// compact trace's deltas applied and its hierarchies looked up, so a reader
/// sees the same [`StepRecord`]s whichever format was written.
///
/// A last line that is incomplete (no newline) and does not parse is the
/// record a killed writer was in the middle of: the reader stops there
/// cleanly and [`TraceReader::torn`] says so. A bad line anywhere else is an
/// error naming the line.
///
/// [`TraceReader::states`] turns it into a [`StateReader`], which reads each
/// step's [`RecordedState`] alone.
pub struct TraceReader {
    path: PathBuf,
    lines: BufReader<File>,
    line_number: u64,
    torn: bool,
    done: bool,
    compact: Option<Compact>,
    first_step: u64,
}

/// A compact trace's reading state: the previous record (its hierarchy a
/// reference) and where the references lead.
struct Compact {
    previous: Option<Map<String, Value>>,
    hierarchies: HierarchyStore,
}

/// `hierarchies.jsonl` in either compact version.
enum HierarchyStore {
    /// Version 2: each distinct hierarchy whole, by sha256.
    Hashed(Hierarchies),
    /// Version 3: each distinct subtree once, by number.
    Nodes(Nodes),
}

impl HierarchyStore {
    /// The whole hierarchy `reference` (a record's `state.hierarchy`) stands for;
    /// `None` when it is not a reference of this version (left for the record's
    /// parser to refuse).
    fn resolve(&mut self, reference: &Value) -> Result<Option<Node>, TraceError> {
        match (self, reference) {
            (HierarchyStore::Hashed(hierarchies), Value::String(hash)) => hierarchies.get(hash).map(Some),
            (HierarchyStore::Nodes(nodes), Value::Number(number)) => match number.as_u64() {
                Some(number) => nodes.hierarchy(number).map(Some),
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }
}

/// One line of a compact trace.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum CompactLine {
    Keyframe(Keyframe),
    Delta(Delta),
}

/// A compact trace's whole record.
#[derive(serde::Deserialize)]
struct Keyframe {
    #[allow(dead_code)]
    key: u64,
    record: Map<String, Value>,
}

/// A compact trace's delta line: a [`Patch`] with its step (spelt out rather than
/// flattened, which would parse the line twice).
#[derive(serde::Deserialize)]
struct Delta {
    step: u64,
    #[serde(default)]
    set: Map<String, Value>,
    #[serde(default)]
    del: Vec<String>,
    #[serde(default)]
    copy: std::collections::BTreeMap<String, String>,
}

impl CompactLine {
    /// Parses a line as the writer writes it: a whole record's starts with its
    /// `key`. Parsing straight into the kind the line starts as avoids the untagged
    /// enum's buffering; any other line goes through the enum.
    fn parse(line: &[u8]) -> Result<CompactLine, serde_json::Error> {
        let parsed = if line.starts_with(b"{\"key\":") {
            serde_json::from_slice(line).map(CompactLine::Keyframe)
        } else {
            serde_json::from_slice(line).map(CompactLine::Delta)
        };
        parsed.or_else(|_| serde_json::from_slice(line))
    }
}

impl TraceReader {
    /// Opens `path`: a `trace.jsonl` file or a run directory containing one.
    pub fn open(path: &Path) -> Result<TraceReader, TraceError> {
        let path = trace_file(path);
        let file = File::open(&path).map_err(|e| TraceError::io(&path, e))?;
        let mut reader = TraceReader {
            lines: BufReader::new(file),
            line_number: 0,
            torn: false,
            done: false,
            compact: None,
            first_step: 0,
            path,
        };
        let mut first = Vec::new();
        reader
            .lines
            .read_until(b'\n', &mut first)
            .map_err(|e| TraceError::io(&reader.path, e))?;
        match serde_json::from_slice::<Header>(&first) {
            Ok(header) if header.uatu_trace > COMPACT_VERSION => {
                reader.line_number = 1;
                return Err(reader.broken(format!(
                    "trace format {} is newer than this uatu reads ({COMPACT_VERSION}): read it with a newer uatu",
                    header.uatu_trace
                )));
            }
            Ok(header) => {
                reader.line_number = 1;
                let directory = reader.path.parent().unwrap_or(Path::new("."));
                let file = directory.join(HIERARCHIES_FILE);
                reader.compact = Some(Compact {
                    previous: None,
                    hierarchies: if header.uatu_trace <= 2 {
                        HierarchyStore::Hashed(Hierarchies::new(file))
                    } else {
                        HierarchyStore::Nodes(Nodes::new(file))
                    },
                });
            }
            // A header cut short: a compact trace killed before its first step.
            Err(_) if !first.ends_with(b"\n") && first.starts_with(b"{\"uatuTrace\"") => {
                reader.done = true;
                reader.torn = true;
            }
            // A full trace: its first line is step 0's record.
            Err(_) => reader
                .lines
                .rewind()
                .map_err(|e| TraceError::io(&reader.path, e))?,
        }
        Ok(reader)
    }

    /// Opens the trace at `path` to read from `first_step` on, starting at the
    /// last whole record before it that `index` knows of instead of at step 0.
    pub fn open_at(path: &Path, index: &TraceIndex, first_step: u64) -> Result<TraceReader, TraceError> {
        let mut reader = TraceReader::open(path)?;
        reader.first_step = first_step;
        if reader.done {
            return Ok(reader);
        }
        if let Some(start) = index.start_for(first_step) {
            reader
                .lines
                .seek(SeekFrom::Start(start.offset))
                .map_err(|e| TraceError::io(&reader.path, e))?;
            reader.line_number = start.line - 1;
        }
        Ok(reader)
    }

    /// Reads each step's [`RecordedState`] from here on instead of its whole record.
    pub fn states(self) -> StateReader {
        StateReader {
            trace: self,
            kept: KeptState::default(),
        }
    }
}

impl TraceReader {
    /// Whether reading stopped at a torn (partially written) last record.
    pub fn torn(&self) -> bool {
        self.torn
    }

    /// The next complete line, or `None` at the end (or at a torn last line).
    fn next_line(&mut self) -> Option<Result<(Vec<u8>, bool), TraceError>> {
        let mut line = Vec::new();
        loop {
            line.clear();
            match self.lines.read_until(b'\n', &mut line) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(TraceError::io(&self.path, e)));
                }
            }
            self.line_number += 1;
            if !line.iter().all(u8::is_ascii_whitespace) {
                let complete = line.ends_with(b"\n");
                return Some(Ok((line, complete)));
            }
        }
    }

    fn bad_record(&mut self, source: serde_json::Error) -> TraceError {
        self.done = true;
        TraceError::BadRecord {
            path: self.path.clone(),
            line: self.line_number,
            source,
        }
    }

    /// Reads one line into a record; `None` for a record before `first_step`.
    fn read_record(&mut self, line: &[u8], complete: bool) -> Result<Option<StepRecord>, Option<TraceError>> {
        if self.compact.is_none() {
            return self.read_full(line, complete, |record: &StepRecord| record.step);
        }
        let Some(Applied {
            record: mut current, ..
        }) = self.applied(line, complete)?
        else {
            return Ok(None);
        };
        let Typed { parsed, hierarchy } = self.typed::<StepRecord>(&mut current)?;
        self.keep(current);
        let mut record = parsed.map_err(|source| Some(self.bad_record(source)))?;
        if let Some(hierarchy) = hierarchy {
            record.state.hierarchy = hierarchy;
        }
        Ok(Some(record))
    }

    /// A full trace's line read as `R` (whose step `step_of` gives); `None` for a
    /// record before `first_step`.
    fn read_full<R: DeserializeOwned>(
        &mut self,
        line: &[u8],
        complete: bool,
        step_of: impl Fn(&R) -> u64,
    ) -> Result<Option<R>, Option<TraceError>> {
        match serde_json::from_slice::<R>(line) {
            Ok(record) if step_of(&record) < self.first_step => Ok(None),
            Ok(record) => Ok(Some(record)),
            Err(_) if !complete => Err(None),
            Err(source) => Err(Some(self.bad_record(source))),
        }
    }

    /// Reads lines with `read` until it gives something (`Ok(Some)`); `None` at the
    /// end of the trace or at a torn last line (then [`TraceReader::torn`]).
    fn next_read<T>(
        &mut self,
        mut read: impl FnMut(&mut TraceReader, &[u8], bool) -> Result<Option<T>, Option<TraceError>>,
    ) -> Option<Result<T, TraceError>> {
        while !self.done {
            let (line, complete) = match self.next_line()? {
                Ok(line) => line,
                Err(error) => return Some(Err(error)),
            };
            match read(self, &line, complete) {
                Ok(Some(read)) => return Some(Ok(read)),
                Ok(None) => {}
                Err(None) => {
                    self.torn = true;
                    self.done = true;
                }
                Err(Some(error)) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
        None
    }

    /// A compact trace's line as the whole record it stands for (a delta applied to
    /// the record before it), with what the line changed; `None` for a record before
    /// `first_step`, kept for the next delta. The record is to be given back with
    /// [`TraceReader::keep`] once read.
    fn applied(&mut self, line: &[u8], complete: bool) -> Result<Option<Applied>, Option<TraceError>> {
        let Some(compact) = self.compact.as_mut() else {
            return Err(Some(self.broken("a full trace read as a compact one".into())));
        };
        let (current, changed) = match CompactLine::parse(line) {
            Ok(CompactLine::Keyframe(Keyframe { record, .. })) => (record, Changed::Everything),
            Ok(CompactLine::Delta(Delta { step, set, del, copy })) => {
                let Some(previous) = compact.previous.take() else {
                    return Err(Some(self.broken(format!(
                        "step {step} is a delta with no whole record before it"
                    ))));
                };
                let mut record = baseline(previous, step);
                match apply(&mut record, Patch { set, del, copy }) {
                    Ok(pointers) => (record, Changed::Pointers(pointers)),
                    Err(error) => return Err(Some(self.broken(format!("step {step}: {error}")))),
                }
            }
            Err(_) if !complete => return Err(None),
            Err(source) => return Err(Some(self.bad_record(source))),
        };
        let step = current.get("step").and_then(Value::as_u64).unwrap_or(0);
        if step < self.first_step {
            compact.previous = Some(current);
            return Ok(None);
        }
        Ok(Some(Applied {
            record: current,
            changed,
        }))
    }

    /// Keeps `record` for the next delta.
    fn keep(&mut self, record: Map<String, Value>) {
        if let Some(compact) = self.compact.as_mut() {
            compact.previous = Some(record);
        }
    }

    /// `record` read as `R`, and the typed hierarchy its reference stands for. `R`
    /// is read from the JSON kept for the next delta, not from a copy of it; the
    /// hierarchy reference is swapped for an empty node meanwhile (a `Node` is all
    /// defaults) and put back after: a run revisits few screens, so each is built
    /// once, kept by reference.
    fn typed<R: DeserializeOwned>(
        &mut self,
        record: &mut Map<String, Value>,
    ) -> Result<Typed<R>, Option<TraceError>> {
        let Some(compact) = self.compact.as_mut() else {
            return Err(Some(self.broken("a full trace read as a compact one".into())));
        };
        let mut current = Value::Object(std::mem::take(record));
        let resolved = match current.pointer_mut("/state/hierarchy") {
            Some(slot) => match compact.hierarchies.resolve(slot)? {
                Some(hierarchy) => Some((std::mem::replace(slot, Value::Object(Map::new())), hierarchy)),
                None => None,
            },
            None => None,
        };
        let parsed = R::deserialize(&current);
        let hierarchy = resolved.map(|(reference, hierarchy)| {
            if let Some(slot) = current.pointer_mut("/state/hierarchy") {
                *slot = reference;
            }
            hierarchy
        });
        if let Value::Object(current) = current {
            *record = current;
        }
        Ok(Typed { parsed, hierarchy })
    }

    fn broken(&mut self, problem: String) -> TraceError {
        self.done = true;
        TraceError::Broken {
            path: self.path.clone(),
            line: self.line_number,
            problem,
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<StepRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_read(TraceReader::read_record)
    }
}

/// A compact trace's line as the whole record it stands for ([`TraceReader::applied`]).
struct Applied {
    record: Map<String, Value>,
    changed: Changed,
}

/// A record read as `R` ([`TraceReader::typed`]), and its hierarchy.
struct Typed<R> {
    parsed: Result<R, serde_json::Error>,
    hierarchy: Option<Node>,
}

/// What a compact trace's line changed in the record before it.
enum Changed {
    /// A whole record: everything.
    Everything,
    /// A delta: what its pointers lead to (besides what every delta changes, see
    /// [`baseline`]).
    Pointers(Vec<String>),
}

/// Reads each step's [`RecordedState`] alone, for re-evaluating a spec over a run
/// (`uatu check`): from [`TraceReader::states`].
///
/// Each state is lent, not handed out: the reader keeps the last one and brings it
/// up to date with each delta of a compact trace, reading again only the fields the
/// delta changed (a step usually changes a few snapshots and the hierarchy), so
/// the snapshots that stayed the same are neither parsed nor copied.
pub struct StateReader {
    trace: TraceReader,
    kept: KeptState,
}

/// The state a [`StateReader`] keeps, and the store's reference for its hierarchy
/// (a compact trace's).
#[derive(Default)]
struct KeptState {
    state: Option<RecordedState>,
    hierarchy: Option<Value>,
}

impl StateReader {
    /// The next step's state, or `None` at the end (or at a torn last record).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Result<&RecordedState, TraceError>> {
        let kept = &mut self.kept;
        match self
            .trace
            .next_read(|trace, line, complete| kept.read(trace, line, complete))?
        {
            Ok(()) => self.kept.state.as_ref().map(Ok),
            Err(error) => Some(Err(error)),
        }
    }

    /// Whether reading stopped at a torn (partially written) last record.
    pub fn torn(&self) -> bool {
        self.trace.torn
    }
}

impl KeptState {
    /// Reads one line of `trace` into the kept state; `None` for a record before the
    /// first step asked for.
    fn read(
        &mut self,
        trace: &mut TraceReader,
        line: &[u8],
        complete: bool,
    ) -> Result<Option<()>, Option<TraceError>> {
        if trace.compact.is_none() {
            let Some(state) = trace.read_full(line, complete, |state: &RecordedState| state.step)? else {
                return Ok(None);
            };
            self.state = Some(state);
            return Ok(Some(()));
        }
        let Some(Applied { record, changed }) = trace.applied(line, complete)? else {
            // The kept state no longer follows the records.
            self.state = None;
            return Ok(None);
        };
        let updated = match (&mut self.state, &changed) {
            (Some(state), Changed::Pointers(pointers)) => update_state(state, &record, pointers),
            _ => Ok(false),
        };
        if !matches!(updated, Ok(true)) {
            return self.read_whole(trace, record);
        }
        let reference = record.get("state").and_then(|state| state.get("hierarchy"));
        if reference != self.hierarchy.as_ref() {
            let resolved = match (trace.compact.as_mut(), reference) {
                (Some(compact), Some(reference)) => compact.hierarchies.resolve(reference)?,
                _ => None,
            };
            let Some(hierarchy) = resolved else {
                // Not a reference this store knows: left for the whole record's parser to refuse.
                return self.read_whole(trace, record);
            };
            self.hierarchy = reference.cloned();
            if let Some(state) = self.state.as_mut() {
                state.state.hierarchy = hierarchy;
            }
        }
        trace.keep(record);
        Ok(Some(()))
    }

    /// Reads `record` whole into the kept state.
    fn read_whole(
        &mut self,
        trace: &mut TraceReader,
        mut record: Map<String, Value>,
    ) -> Result<Option<()>, Option<TraceError>> {
        let Typed { parsed, hierarchy } = trace.typed::<RecordedState>(&mut record)?;
        self.hierarchy = record
            .get("state")
            .and_then(|state| state.get("hierarchy"))
            .cloned();
        trace.keep(record);
        let mut state = parsed.map_err(|source| Some(trace.bad_record(source)))?;
        if let Some(hierarchy) = hierarchy {
            state.state.hierarchy = hierarchy;
        }
        self.state = Some(state);
        Ok(Some(()))
    }
}

/// Brings `state` up to date with `record`, the record after it, whose delta
/// changed what `pointers` lead to: reads again what every delta changes (the
/// step, the last action) and the fields the pointers lead into, a snapshot alone
/// when a pointer leads into one. `false` when a pointer leads somewhere this
/// cannot update alone (the record is then read whole); the hierarchy is left to
/// the caller.
fn update_state(
    state: &mut RecordedState,
    record: &Map<String, Value>,
    pointers: &[String],
) -> Result<bool, serde_json::Error> {
    let Some(Value::Object(fields)) = record.get("state") else {
        return Ok(false);
    };
    fn read<T: DeserializeOwned>(
        object: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<T>, serde_json::Error> {
        object.get(key).map(T::deserialize).transpose()
    }
    let (Some(step), Some(state_step)) = (read(record, "step")?, read(fields, "step")?) else {
        return Ok(false);
    };
    state.step = step;
    state.state.step = state_step;
    state.state.last_action = read(fields, "lastAction")?.flatten();
    for pointer in pointers {
        let Some(mut keys) = pointer_keys(pointer) else {
            return Ok(false);
        };
        let (Some(top), field, snapshot) = (keys.next(), keys.next(), keys.next()) else {
            return Ok(false);
        };
        let done = match (top.as_ref(), field.as_deref(), snapshot) {
            ("step", None, _) => true,
            ("time", None, _) => read(record, "time")?.map(|time| state.time = time).is_some(),
            ("evaluated", None, _) => {
                state.evaluated = read(record, "evaluated")?.unwrap_or(true);
                true
            }
            ("state", Some("snapshots"), Some(key)) => match fields.get("snapshots") {
                Some(Value::Object(snapshots)) => {
                    match snapshots.get(key.as_ref()) {
                        Some(value) => state.state.snapshots.insert(key.into_owned(), value.clone()),
                        None => state.state.snapshots.remove(key.as_ref()),
                    };
                    true
                }
                _ => false,
            },
            ("state", Some("step" | "lastAction" | "hierarchy"), _) => true,
            ("state", Some("time"), _) => read(fields, "time")?
                .map(|time| state.state.time = time)
                .is_some(),
            ("state", Some("screen"), _) => read(fields, "screen")?
                .map(|screen| state.state.screen = screen)
                .is_some(),
            ("state", Some("logs"), _) => read(fields, "logs")?
                .map(|logs| state.state.logs = logs)
                .is_some(),
            ("state", Some("exceptions"), _) => read(fields, "exceptions")?
                .map(|exceptions| state.state.exceptions = exceptions)
                .is_some(),
            ("state", Some("coverage"), _) => {
                state.state.coverage = read(fields, "coverage")?.flatten();
                true
            }
            ("state", Some("window"), _) => {
                state.state.window = read(fields, "window")?.flatten();
                true
            }
            // The whole state, the whole of its snapshots, or a field it does not have.
            ("state", _, _) => false,
            // The rest of the record (extractor values, properties, metrics…).
            _ => true,
        };
        if !done {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Every complete step record of a trace (see [`TraceReader`]).
pub fn read_steps(path: &Path) -> Result<Vec<StepRecord>, TraceError> {
    TraceReader::open(path)?.collect()
}

/// The records of steps `first..end` of a trace (fewer if it holds fewer), read
/// from the nearest whole record before `first` rather than from step 0.
pub fn read_step_range(
    path: &Path,
    index: &TraceIndex,
    first: u64,
    end: u64,
) -> Result<Vec<StepRecord>, TraceError> {
    TraceReader::open_at(path, index, first)?
        .take_while(|record| record.as_ref().map_or(true, |r| r.step < end))
        .collect()
}

fn trace_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(TRACE_FILE)
    } else {
        path.to_path_buf()
    }
}

/// Where a reader may start: a line holding a whole record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Start {
    step: u64,
    offset: u64,
    line: u64,
}

/// Where the whole records of a trace are, for paging through a long run
/// without reading it from step 0: see [`TraceReader::open_at`]. Built by
/// scanning the trace's lines without parsing them; [`TraceIndex::refresh`]
/// reads only what was appended since, for a run still being written.
#[derive(Debug, Clone)]
pub struct TraceIndex {
    path: PathBuf,
    starts: Vec<Start>,
    records: u64,
    last_step: Option<u64>,
    scanned: u64,
    lines: u64,
}

impl TraceIndex {
    /// Indexes the trace at `path` (a `trace.jsonl` or a run directory).
    pub fn build(path: &Path) -> Result<TraceIndex, TraceError> {
        let mut index = TraceIndex {
            path: trace_file(path),
            starts: Vec::new(),
            records: 0,
            last_step: None,
            scanned: 0,
            lines: 0,
        };
        index.refresh()?;
        Ok(index)
    }

    /// Indexes the complete lines appended since the last call.
    pub fn refresh(&mut self) -> Result<(), TraceError> {
        let file = File::open(&self.path).map_err(|e| TraceError::io(&self.path, e))?;
        let mut lines = BufReader::new(file);
        lines
            .seek(SeekFrom::Start(self.scanned))
            .map_err(|e| TraceError::io(&self.path, e))?;
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = lines
                .read_until(b'\n', &mut line)
                .map_err(|e| TraceError::io(&self.path, e))?;
            if read == 0 || !line.ends_with(b"\n") {
                return Ok(());
            }
            let offset = self.scanned;
            self.scanned += read as u64;
            self.lines += 1;
            // Lines are written by uatu itself, so their first key says what they are.
            if let Some(step) = leading_number(&line, b"{\"key\":") {
                self.add(step, Some(offset));
            } else if let Some(step) = leading_number(&line, b"{\"step\":") {
                // In a full trace every line is a whole record; in a compact one a delta.
                let whole = self.lines == 1 || self.starts.first().is_some_and(|s| s.line == 1);
                self.add(step, whole.then_some(offset));
            }
        }
    }

    fn add(&mut self, step: u64, whole_at: Option<u64>) {
        if let Some(offset) = whole_at {
            self.starts.push(Start {
                step,
                offset,
                line: self.lines,
            });
        }
        self.records += 1;
        self.last_step = Some(step);
    }

    /// Complete records in the trace when last scanned.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The step of the last complete record, if any.
    pub fn last_step(&self) -> Option<u64> {
        self.last_step
    }

    fn start_for(&self, step: u64) -> Option<Start> {
        let after = self.starts.partition_point(|start| start.step <= step);
        after.checked_sub(1).map(|i| self.starts[i])
    }
}

/// The number after `prefix` at the start of `line`.
fn leading_number(line: &[u8], prefix: &[u8]) -> Option<u64> {
    let digits = line.strip_prefix(prefix)?;
    let end = digits.iter().position(|b| !b.is_ascii_digit())?;
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// The hash at the start of a line as the writer writes it, `{"sha256":"<64 hex>",…`,
/// without parsing the hierarchy that follows.
fn hash_prefix(line: &[u8]) -> Option<String> {
    let rest = line.strip_prefix(b"{\"sha256\":\"")?;
    let hash = rest.get(..64)?;
    (rest.get(64) == Some(&b'"') && hash.iter().all(u8::is_ascii_hexdigit))
        .then(|| String::from_utf8_lossy(hash).into_owned())
}

/// A version 2 `hierarchies.jsonl`, looked up by hash: an offset per hash (scanned as
/// needed, so a run being written is followed) and a few parsed hierarchies.
struct Hierarchies {
    path: PathBuf,
    file: Option<BufReader<File>>,
    offsets: HashMap<String, u64>,
    scanned: u64,
    parsed: RecentlyUsed<String, Node>,
}

#[derive(serde::Deserialize)]
struct HierarchyLine {
    sha256: String,
    #[serde(default)]
    hierarchy: Node,
}

#[derive(serde::Deserialize)]
struct HierarchyHash {
    sha256: String,
}

impl Hierarchies {
    fn new(path: PathBuf) -> Hierarchies {
        Hierarchies {
            path,
            file: None,
            offsets: HashMap::new(),
            scanned: 0,
            parsed: RecentlyUsed::new(HIERARCHY_CACHE),
        }
    }

    fn get(&mut self, hash: &str) -> Result<Node, TraceError> {
        if let Some(hierarchy) = self.parsed.get(hash) {
            return Ok(hierarchy.clone());
        }
        if !self.offsets.contains_key(hash) {
            self.scan()?;
        }
        let offset = *self
            .offsets
            .get(hash)
            .ok_or_else(|| TraceError::MissingHierarchy {
                path: self.path.clone(),
                sha256: hash.to_string(),
            })?;
        let line = read_line_at(&mut self.file, &self.path, offset)?;
        let parsed: HierarchyLine = serde_json::from_slice(&line).map_err(|source| TraceError::BadJson {
            path: self.path.clone(),
            source,
        })?;
        self.parsed.insert(parsed.sha256, parsed.hierarchy.clone());
        Ok(parsed.hierarchy)
    }

    /// Indexes the complete lines appended since the last scan.
    fn scan(&mut self) -> Result<(), TraceError> {
        let path = self.path.clone();
        let mut found = Vec::new();
        self.scanned = complete_lines(&mut self.file, &path, self.scanned, |line, offset| {
            let hash = match hash_prefix(line) {
                Some(hash) => hash,
                None => {
                    let parsed: HierarchyHash =
                        serde_json::from_slice(line).map_err(|source| TraceError::BadJson {
                            path: path.clone(),
                            source,
                        })?;
                    parsed.sha256
                }
            };
            found.push((hash, offset));
            Ok(())
        })?;
        self.offsets.extend(found);
        Ok(())
    }
}

/// Most node lines kept parsed while reading a version 3 `hierarchies.jsonl`.
const NODE_CACHE: usize = 65_536;

/// A version 3 `hierarchies.jsonl`: node `n` is its line `n` (from 0),
/// `{"n":n,<fields>,"children":[<earlier numbers>]}`. Lines are indexed as
/// needed (a run being written is followed); parsed nodes and a few whole
/// hierarchies are kept.
struct Nodes {
    path: PathBuf,
    file: Option<BufReader<File>>,
    offsets: Vec<u64>,
    scanned: u64,
    parsed: HashMap<u64, StoredNode>,
    hierarchies: RecentlyUsed<u64, Node>,
}

/// A node line, parsed: the node without its children, and its children's numbers.
#[derive(Clone)]
struct StoredNode {
    node: Node,
    children: Vec<u64>,
}

impl Nodes {
    fn new(path: PathBuf) -> Nodes {
        Nodes {
            path,
            file: None,
            offsets: Vec::new(),
            scanned: 0,
            parsed: HashMap::new(),
            hierarchies: RecentlyUsed::new(HIERARCHY_CACHE),
        }
    }

    /// The whole hierarchy whose root is node `root`, as a `full` trace holds it.
    fn hierarchy(&mut self, root: u64) -> Result<Node, TraceError> {
        if let Some(hierarchy) = self.hierarchies.get(&root) {
            return Ok(hierarchy.clone());
        }
        let hierarchy = self.build(root)?;
        self.hierarchies.insert(root, hierarchy.clone());
        Ok(hierarchy)
    }

    /// Node `number` with its subtree, from the typed nodes kept (a new screen
    /// shares most of its nodes with screens before it). Children precede their
    /// parents (the reader checks it), so this ends even on a damaged file.
    fn build(&mut self, number: u64) -> Result<Node, TraceError> {
        let StoredNode { mut node, children } = self.node(number)?;
        node.children = children
            .into_iter()
            .map(|child| self.build(child))
            .collect::<Result<Vec<Node>, TraceError>>()?;
        Ok(node)
    }

    fn node(&mut self, number: u64) -> Result<StoredNode, TraceError> {
        if let Some(node) = self.parsed.get(&number) {
            return Ok(node.clone());
        }
        if number >= self.offsets.len() as u64 {
            self.scan()?;
        }
        let offset = *usize::try_from(number)
            .ok()
            .and_then(|i| self.offsets.get(i))
            .ok_or_else(|| TraceError::MissingNode {
                path: self.path.clone(),
                number,
            })?;
        let line = read_line_at(&mut self.file, &self.path, offset)?;
        let node = self.parse(number, &line)?;
        if self.parsed.len() >= NODE_CACHE {
            self.parsed.clear();
        }
        self.parsed.insert(number, node.clone());
        Ok(node)
    }

    fn parse(&self, number: u64, line: &[u8]) -> Result<StoredNode, TraceError> {
        let broken = |problem: String| TraceError::Broken {
            path: self.path.clone(),
            line: number + 1,
            problem,
        };
        let bad_json = |source| TraceError::BadJson {
            path: self.path.clone(),
            source,
        };
        let mut fields: Map<String, Value> = serde_json::from_slice(line).map_err(bad_json)?;
        if fields.remove("n").and_then(|n| n.as_u64()) != Some(number) {
            return Err(broken(format!("not node {number}")));
        }
        let children = match fields.remove("children") {
            None => Vec::new(),
            Some(Value::Array(children)) => children
                .iter()
                .map(|child| child.as_u64().filter(|&child| child < number))
                .collect::<Option<Vec<u64>>>()
                .ok_or_else(|| broken(format!("node {number}'s children are not all earlier nodes")))?,
            Some(_) => return Err(broken(format!("node {number}'s children are not a list"))),
        };
        let node = Node::deserialize(&Value::Object(fields)).map_err(bad_json)?;
        Ok(StoredNode { node, children })
    }

    /// Indexes the complete lines appended since the last scan (a torn last
    /// line is one no record refers to: records are written after their nodes).
    fn scan(&mut self) -> Result<(), TraceError> {
        let offsets = &mut self.offsets;
        self.scanned = complete_lines(&mut self.file, &self.path, self.scanned, |_, offset| {
            offsets.push(offset);
            Ok(())
        })?;
        Ok(())
    }
}

/// Visits each complete line of the file at `path` from byte `start` on, with its
/// offset; returns the offset after the last one (a torn last line is left for
/// the next call: no record refers to it, records being written after it).
fn complete_lines(
    file: &mut Option<BufReader<File>>,
    path: &Path,
    start: u64,
    mut visit: impl FnMut(&[u8], u64) -> Result<(), TraceError>,
) -> Result<u64, TraceError> {
    let file = open_once(file, path)?;
    file.seek(SeekFrom::Start(start))
        .map_err(|e| TraceError::io(path, e))?;
    let mut offset = start;
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = file
            .read_until(b'\n', &mut line)
            .map_err(|e| TraceError::io(path, e))?;
        if read == 0 || !line.ends_with(b"\n") {
            return Ok(offset);
        }
        visit(&line, offset)?;
        offset += read as u64;
    }
}

/// The file at `path`, opened the first time it is needed.
fn open_once<'a>(
    file: &'a mut Option<BufReader<File>>,
    path: &Path,
) -> Result<&'a mut BufReader<File>, TraceError> {
    let opened = match file.take() {
        Some(opened) => opened,
        None => BufReader::new(File::open(path).map_err(|e| TraceError::io(path, e))?),
    };
    Ok(file.insert(opened))
}

/// The line starting at `offset` of the file at `path`.
fn read_line_at(file: &mut Option<BufReader<File>>, path: &Path, offset: u64) -> Result<Vec<u8>, TraceError> {
    let file = open_once(file, path)?;
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| TraceError::io(path, e))?;
    let mut line = Vec::new();
    file.read_until(b'\n', &mut line)
        .map_err(|e| TraceError::io(path, e))?;
    Ok(line)
}

/// A page of a trace's steps and what the reader saw at the end of the file.
#[derive(Debug, Clone, Default)]
pub struct StepRange {
    /// The complete records from the page's first step, at most the count asked for.
    pub steps: Vec<StepRecord>,
    /// Whether reading stopped at a torn (partially written) last record.
    pub torn: bool,
}

/// The complete records of steps `first..first + count` of the trace at `path` (a
/// `trace.jsonl` or a run directory), tolerating a torn last line: what `uatu inspect`
/// serves a page from. Reads from the nearest whole record before `first`.
pub fn read_page(path: &Path, first: u64, count: u64) -> Result<StepRange, TraceError> {
    let index = TraceIndex::build(path)?;
    let mut reader = TraceReader::open_at(path, &index, first)?;
    let end = first.saturating_add(count);
    let mut steps = Vec::new();
    for record in reader.by_ref() {
        let record = record?;
        if record.step >= end {
            break;
        }
        steps.push(record);
    }
    Ok(StepRange {
        steps,
        torn: reader.torn(),
    })
}

/// How many complete step records the trace at `path` holds, without parsing them.
pub fn count_steps(path: &Path) -> Result<u64, TraceError> {
    Ok(TraceIndex::build(path)?.records())
}

/// Reads a run directory's `meta.json`, with the device's options as `O`.
pub fn read_meta<O: serde::de::DeserializeOwned + Default>(
    run_dir: &Path,
) -> Result<super::record::Meta<O>, TraceError> {
    read_json(&run_dir.join(super::writer::META_FILE))
}

/// Reads a run directory's `summary.json` (written when the run ended).
pub fn read_summary(run_dir: &Path) -> Result<super::record::Summary, TraceError> {
    read_json(&run_dir.join(super::writer::SUMMARY_FILE))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, TraceError> {
    let bytes = std::fs::read(path).map_err(|e| TraceError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|source| TraceError::BadJson {
        path: path.to_path_buf(),
        source,
    })
}
