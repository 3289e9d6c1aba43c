//! Bundling a spec and its imports into one ES module, in process, with the oxc
//! parser, TypeScript transformer and code generator. `@uatu/spec` comes from the
//! sources embedded in this binary, so users never run npm (nor install a bundler).
//!
//! Each module is parsed (a syntax error is `file:line:col: message`), its imports are
//! resolved (relative paths, `@uatu/spec`, packages in `node_modules`) and checked
//! against what the imported module exports, its types are stripped, and it is printed
//! with a source map. The bundle then evaluates the modules in dependency order, each in
//! its own function scope with an exports object of getters; the import and export
//! statements are rewritten in place, keeping every other line and column where the
//! module's own source map put it, so the maps concatenate. An import cycle is refused:
//! each module binds its imports once, before its body runs, which a cycle would break.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use oxc_allocator::Allocator;
use oxc_ast::ast::{ExportDefaultDeclarationKind, ModuleDeclaration};
use oxc_codegen::{Codegen, CodegenOptions, CommentOptions, IndentChar};
use oxc_diagnostics::{OxcDiagnostic, Severity};
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_sourcemap::{ConcatSourceMapBuilder, SourceMap};
use oxc_span::{GetSpan, SourceType};
use oxc_syntax::module_record::{ExportExportName, ExportImportName, ExportLocalName, ImportImportName};
use oxc_transformer::{TransformOptions, Transformer};
use sha2::{Digest, Sha256};

/// The `package.json` of the embedded `@uatu/spec`.
pub(super) const LIBRARY_MANIFEST: &str = include_str!("../../../packages/spec/package.json");

/// The `@uatu/spec` package, as embedded at build time (paths relative to the package).
const LIBRARY: &[(&str, &str)] = &[
    ("package.json", LIBRARY_MANIFEST),
    (
        "src/index.ts",
        include_str!("../../../packages/spec/src/index.ts"),
    ),
    (
        "src/defaults/properties.ts",
        include_str!("../../../packages/spec/src/defaults/properties.ts"),
    ),
];

/// The package name imports use for the embedded library.
const LIBRARY_NAME: &str = "@uatu/spec";

/// A bundled spec: one script and its source map, with sources named for messages.
#[derive(Debug)]
pub struct Bundle {
    /// The spec and its imports as one JavaScript module.
    pub script: String,
    /// The script's source map (JSON).
    pub source_map: String,
}

/// Why a `.ts`/`.js` spec could not be bundled into one script.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The spec (or a module it imports) does not compile, or an import cannot be
    /// resolved or names nothing the module exports: `file:line:col: message` lines.
    #[error("{0}")]
    Syntax(String),
    /// Modules import each other in a cycle (named in order, the first again last).
    #[error("import cycle: {}; move what they share into a module that imports neither", .0.join(" → "))]
    Cycle(Vec<String>),
    /// A file could not be read.
    #[error("cannot read {shown}")]
    Read {
        /// The file, as messages name it.
        shown: String,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The bundler produced something it cannot use itself: a bug in uatu.
    #[error("internal error while bundling {shown}: {message}")]
    Internal {
        /// The module being bundled, as messages name it.
        shown: String,
        /// What went wrong.
        message: String,
    },
}

/// The embedded library's hash: part of every cache key of built specs.
pub fn library_hash() -> String {
    let mut hasher = Sha256::new();
    for (name, text) in LIBRARY {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

/// Where a module's source is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Origin {
    /// A file (canonical path).
    File(PathBuf),
    /// A file of the embedded library (its path in the package, e.g. `src/index.ts`).
    Library(&'static str),
}

/// What importing a module needs of it: the names it exports, and what it re-exports.
#[derive(Debug, Default)]
struct Exports {
    /// Names it exports itself, each with whether it is only a type (an import of a type
    /// is elided, not wrong; the bundle does not export types).
    own: Vec<(String, bool)>,
    /// `export * from` targets, as module indices.
    stars: Vec<usize>,
}

/// One module, parsed, resolved and printed.
struct Module {
    /// How messages name it.
    shown: String,
    /// Its printed code, import and export statements rewritten.
    code: String,
    /// The line evaluated before its code: its imports' bindings, its exports' getters.
    prologue: String,
    map: SourceMap<'static>,
    /// The modules its code still imports once types are stripped, in source order:
    /// they are evaluated before it.
    runtime_deps: Vec<usize>,
    exports: Exports,
}

/// A named import to check once every module is known.
struct ImportCheck {
    /// `file:line:col` of the imported name.
    location: String,
    module: usize,
    name: String,
}

/// Bundles the spec at `spec` (`.ts` or `.js`). `shown` is how messages name it.
pub fn bundle(spec: &Path, shown: &str) -> Result<Bundle, BundleError> {
    let spec = std::fs::canonicalize(spec).map_err(|source| BundleError::Read {
        shown: shown.to_string(),
        source,
    })?;
    let mut bundler = Bundler {
        spec: spec.clone(),
        shown: shown.to_string(),
        index: HashMap::new(),
        modules: Vec::new(),
        checks: Vec::new(),
        errors: Vec::new(),
    };
    let entry = bundler.add(Origin::File(spec))?;
    if bundler.errors.is_empty() {
        bundler.check_imports();
    }
    if !bundler.errors.is_empty() {
        return Err(BundleError::Syntax(bundler.errors.join("\n")));
    }
    emit(&bundler.modules, entry)
}

struct Bundler {
    spec: PathBuf,
    shown: String,
    index: HashMap<Origin, usize>,
    /// `None` until the module is processed (and for one that failed to).
    modules: Vec<Option<Module>>,
    checks: Vec<ImportCheck>,
    /// `file:line:col: message` lines, all reported together.
    errors: Vec<String>,
}

impl Bundler {
    /// How messages and the source map name a module: the spec as the user named it,
    /// the library as `@uatu/spec/...`, anything else relative to the spec's directory.
    fn display_name(&self, origin: &Origin) -> String {
        match origin {
            Origin::Library(path) => format!("{LIBRARY_NAME}/{}", path.strip_prefix("src/").unwrap_or(path)),
            Origin::File(path) if *path == self.spec => self.shown.clone(),
            Origin::File(path) => {
                let spec_dir = self.spec.parent().unwrap_or(Path::new("/"));
                match path.strip_prefix(spec_dir) {
                    Ok(rest) => {
                        let shown_dir = Path::new(&self.shown).parent().unwrap_or(Path::new(""));
                        shown_dir.join(rest).display().to_string()
                    }
                    Err(_) => path.display().to_string(),
                }
            }
        }
    }

    /// Reads, parses, resolves and prints the module at `origin` (and, first, its
    /// imports), once; returns its index. A module already being added (an import
    /// cycle) returns its index at once; [`emit`] refuses the cycle.
    fn add(&mut self, origin: Origin) -> Result<usize, BundleError> {
        if let Some(&id) = self.index.get(&origin) {
            return Ok(id);
        }
        let id = self.modules.len();
        self.modules.push(None);
        self.index.insert(origin.clone(), id);
        let shown = self.display_name(&origin);
        let (text, path) = match &origin {
            Origin::File(path) => (
                std::fs::read_to_string(path).map_err(|source| BundleError::Read {
                    shown: shown.clone(),
                    source,
                })?,
                path.clone(),
            ),
            Origin::Library(name) => (
                LIBRARY
                    .iter()
                    .find(|(file, _)| file == name)
                    .map(|(_, text)| text.to_string())
                    .unwrap_or_default(),
                PathBuf::from(name),
            ),
        };
        let allocator = Allocator::default();
        let source_type = SourceType::from_path(&path)
            .unwrap_or_else(|_| SourceType::mjs())
            .with_module(true);
        let parsed = Parser::new(&allocator, &text, source_type).parse();
        let parse_errors: Vec<&OxcDiagnostic> = parsed
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        if !parse_errors.is_empty() || parsed.panicked {
            for diagnostic in &parse_errors {
                self.errors.push(located(&shown, &text, diagnostic));
            }
            if parse_errors.is_empty() {
                self.errors.push(format!("{shown}: cannot parse"));
            }
            return Ok(id);
        }
        let record = &parsed.module_record;

        // Imports, in source order, resolved and added first.
        let mut requests: Vec<(&str, u32)> = record
            .requested_modules
            .iter()
            .filter(|(_, uses)| uses.iter().any(|used| !used.is_type))
            .filter_map(|(name, uses)| {
                uses.iter()
                    .map(|used| used.span.start)
                    .min()
                    .map(|at| (name.as_str(), at))
            })
            .collect();
        requests.sort_by_key(|(_, at)| *at);
        let mut deps = BTreeMap::new();
        let mut unresolved = false;
        for (specifier, at) in requests {
            match resolve(&origin, specifier) {
                Some(target) => {
                    let dep = self.add(target)?;
                    deps.insert(specifier.to_string(), dep);
                }
                None => {
                    unresolved = true;
                    self.errors.push(format!(
                        "{}: Could not resolve \"{specifier}\"",
                        location(&shown, &text, at)
                    ));
                }
            }
        }
        if unresolved {
            return Ok(id);
        }
        for entry in record.import_entries.iter().filter(|entry| !entry.is_type) {
            let (name, at) = match &entry.import_name {
                ImportImportName::Name(name) => (name.name.to_string(), name.span.start),
                ImportImportName::Default(span) => ("default".to_string(), span.start),
                ImportImportName::NamespaceObject => continue,
            };
            if let Some(&module) = deps.get(entry.module_request.name.as_str()) {
                self.checks.push(ImportCheck {
                    location: location(&shown, &text, at),
                    module,
                    name,
                });
            }
        }
        let mut exports = Exports::default();
        for entry in record
            .local_export_entries
            .iter()
            .chain(record.indirect_export_entries.iter())
        {
            let name = match &entry.export_name {
                ExportExportName::Name(name) => name.name.to_string(),
                ExportExportName::Default(_) => "default".to_string(),
                ExportExportName::Null => continue,
            };
            exports.own.push((name, entry.is_type));
        }
        for entry in record.star_export_entries.iter() {
            if let Some(&module) = entry
                .module_request
                .as_ref()
                .and_then(|request| deps.get(request.name.as_str()))
            {
                exports.stars.push(module);
            }
        }

        // Types stripped, then printed with a source map.
        let mut program = parsed.program;
        let scoping = SemanticBuilder::new().build(&program).semantic.into_scoping();
        let transformed = Transformer::new(&allocator, &path, &TransformOptions::default())
            .build_with_scoping(scoping, &mut program);
        let transform_errors: Vec<&OxcDiagnostic> = transformed
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        if !transform_errors.is_empty() {
            for diagnostic in transform_errors {
                self.errors.push(located(&shown, &text, diagnostic));
            }
            return Ok(id);
        }
        let printed = Codegen::new()
            .with_options(CodegenOptions {
                source_map_path: Some(PathBuf::from(&shown)),
                // QuickJS keeps functions' source text in the bytecode: no comments,
                // two-space indents, as esbuild printed.
                comments: CommentOptions::disabled(),
                indent_char: IndentChar::Space,
                indent_width: 2,
                ..CodegenOptions::default()
            })
            .build(&program);
        let internal = |message: String| BundleError::Internal {
            shown: shown.clone(),
            message,
        };
        let map = printed
            .map
            .ok_or_else(|| internal("the printer produced no source map".into()))?;
        let linked = link(&printed.code, id, &deps).map_err(internal)?;
        self.modules[id] = Some(Module {
            shown,
            code: linked.code,
            prologue: linked.prologue,
            map: map.into_owned(),
            runtime_deps: linked.runtime_deps,
            exports,
        });
        Ok(id)
    }

    /// Every named import names something its module exports.
    fn check_imports(&mut self) {
        let modules = &self.modules;
        let errors: Vec<String> = self
            .checks
            .iter()
            .filter(|check| {
                !exported_names(modules, check.module)
                    .iter()
                    .any(|(name, _)| *name == check.name)
            })
            .map(|check| {
                let module = modules
                    .get(check.module)
                    .and_then(Option::as_ref)
                    .map(|module| module.shown.as_str())
                    .unwrap_or_default();
                format!(
                    "{}: No matching export in \"{module}\" for import \"{}\"",
                    check.location, check.name
                )
            })
            .collect();
        self.errors.extend(errors);
    }
}

/// Every name module `id` exports (with whether it is only a type), its own and those
/// of its `export *` modules (except `default`).
fn exported_names(modules: &[Option<Module>], id: usize) -> Vec<(String, bool)> {
    let mut names: Vec<(String, bool)> = Vec::new();
    let mut seen = vec![id];
    let mut stack = vec![(id, true)];
    while let Some((module, with_default)) = stack.pop() {
        let Some(Some(module)) = modules.get(module) else {
            continue;
        };
        for (name, is_type) in &module.exports.own {
            if (with_default || name != "default") && !names.iter().any(|(known, _)| known == name) {
                names.push((name.clone(), *is_type));
            }
        }
        for &star in &module.exports.stars {
            if !seen.contains(&star) {
                seen.push(star);
                stack.push((star, false));
            }
        }
    }
    names
}

/// The exports object of module `id` in the bundle.
fn exports_object(id: usize) -> String {
    format!("__uatu_m{id}")
}

/// A printed module made ready for the bundle.
struct Linked {
    /// Its code: the same lines and columns, import statements blanked, `export` dropped.
    code: String,
    /// The one line to evaluate before it: bindings of its imports, getters of its exports.
    prologue: String,
    /// The modules its code imports, in source order.
    runtime_deps: Vec<usize>,
}

/// Rewrites a printed module's import and export statements for the bundle. `deps`
/// maps its import specifiers to module indices. An error here is a bug in uatu.
fn link(code: &str, id: usize, deps: &BTreeMap<String, usize>) -> Result<Linked, String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, code, SourceType::mjs()).parse();
    if let Some(diagnostic) = parsed.diagnostics.first() {
        return Err(format!("the printed module does not parse: {diagnostic}"));
    }
    let record = &parsed.module_record;
    let dep = |specifier: &str| {
        deps.get(specifier)
            .copied()
            .ok_or_else(|| format!("unresolved import \"{specifier}\""))
    };
    let mut requests: Vec<(&str, u32)> = record
        .requested_modules
        .iter()
        .filter_map(|(name, uses)| {
            uses.iter()
                .map(|used| used.span.start)
                .min()
                .map(|at| (name.as_str(), at))
        })
        .collect();
    requests.sort_by_key(|(_, at)| *at);
    let runtime_deps = requests
        .into_iter()
        .map(|(specifier, _)| dep(specifier))
        .collect::<Result<Vec<_>, _>>()?;
    let object = |specifier: &str| dep(specifier).map(exports_object);

    let this = exports_object(id);
    let mut prologue = String::new();
    for entry in record.import_entries.iter() {
        let from = object(entry.module_request.name.as_str())?;
        let local = entry.local_name.name.as_str();
        match &entry.import_name {
            ImportImportName::Name(name) => {
                let _ = write!(prologue, "const {local} = {from}[{:?}]; ", name.name.as_str());
            }
            ImportImportName::Default(_) => {
                let _ = write!(prologue, "const {local} = {from}.default; ");
            }
            ImportImportName::NamespaceObject => {
                let _ = write!(prologue, "const {local} = {from}; ");
            }
        }
    }
    let mut has_default_value = false;
    for entry in record
        .local_export_entries
        .iter()
        .chain(record.indirect_export_entries.iter())
    {
        let exported = match &entry.export_name {
            ExportExportName::Name(name) => name.name.to_string(),
            ExportExportName::Default(_) => "default".to_string(),
            ExportExportName::Null => continue,
        };
        let value = match (&entry.module_request, &entry.import_name) {
            (Some(request), ExportImportName::Name(name)) => {
                format!("{}[{:?}]", object(request.name.as_str())?, name.name.as_str())
            }
            (Some(request), _) => object(request.name.as_str())?,
            (None, _) => match &entry.local_name {
                ExportLocalName::Name(name) => name.name.to_string(),
                ExportLocalName::Default(_) | ExportLocalName::Null => {
                    has_default_value = true;
                    "__uatu_d".to_string()
                }
            },
        };
        let _ = write!(prologue, "__uatu_export({this}, {exported:?}, () => {value}); ");
    }
    for entry in record.star_export_entries.iter() {
        if let Some(request) = &entry.module_request {
            let _ = write!(
                prologue,
                "__uatu_reexport({this}, {}); ",
                object(request.name.as_str())?
            );
        }
    }
    if has_default_value {
        prologue.insert_str(0, "let __uatu_d; ");
    }

    // The statements themselves, rewritten in place (never adding or removing a line).
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for statement in &parsed.program.body {
        let Some(declaration) = statement.as_module_declaration() else {
            continue;
        };
        let span = declaration.span();
        let (start, end) = (span.start as usize, span.end as usize);
        match declaration {
            ModuleDeclaration::ExportDeclaration(_) => {
                edits.push((start, start + "export".len(), " ".repeat("export".len())));
            }
            ModuleDeclaration::ExportDefaultDeclaration(default) => {
                let keyword_end = code
                    .get(start..end)
                    .and_then(|text| text.find("default"))
                    .map(|at| start + at + "default".len())
                    .ok_or("`export default` without `default`")?;
                let named = match &default.declaration {
                    ExportDefaultDeclarationKind::FunctionDeclaration(function) => function.id.is_some(),
                    ExportDefaultDeclarationKind::ClassDeclaration(class) => class.id.is_some(),
                    _ => false,
                };
                // `__uatu_d =` is no wider than `export default`: the columns after it stay.
                let replacement = if named { "" } else { "__uatu_d =" };
                let width = keyword_end - start;
                edits.push((start, keyword_end, format!("{replacement:<width$}")));
            }
            _ => edits.push((start, end, blank(code.get(start..end).unwrap_or_default()))),
        }
    }
    let mut linked = code.to_string();
    edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
    for (start, end, replacement) in edits {
        linked.replace_range(start..end, &replacement);
    }
    Ok(Linked {
        code: linked,
        prologue,
        runtime_deps,
    })
}

/// `text` with every character but line breaks made a space: the lines stay.
fn blank(text: &str) -> String {
    text.chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect()
}

/// The modules in evaluation order (each after what it imports), then the entry's
/// exports as the bundle's, with one source map over it all.
fn emit(modules: &[Option<Module>], entry: usize) -> Result<Bundle, BundleError> {
    let order = evaluation_order(modules, entry)?;

    let mut script = String::new();
    script.push_str(
        "const __uatu_export = (o, n, get) => Object.defineProperty(o, n, { get, enumerable: true });\n\
         const __uatu_reexport = (o, m) => { for (const n of Object.keys(m)) \
         if (n !== \"default\" && !Object.prototype.hasOwnProperty.call(o, n)) __uatu_export(o, n, () => m[n]); };\n",
    );
    let objects: Vec<String> = (0..modules.len())
        .map(|id| format!("{} = Object.create(null)", exports_object(id)))
        .collect();
    let _ = writeln!(script, "const {};", objects.join(", "));
    let mut lines = script.lines().count() as u32;
    let mut maps = Vec::new();
    for module in &order {
        let _ = writeln!(script, "(function () {{ {}", module.prologue);
        lines += 1;
        maps.push((&module.map, lines));
        script.push_str(&module.code);
        if !module.code.ends_with('\n') {
            script.push('\n');
        }
        lines += module.code.lines().count() as u32;
        script.push_str("})();\n");
        lines += 1;
    }
    let mut bindings = Vec::new();
    let mut names = Vec::new();
    let runtime = exported_names(modules, entry);
    for (index, (name, _)) in runtime.iter().filter(|(_, is_type)| !is_type).enumerate() {
        bindings.push(format!("__uatu_e{index} = {}[{name:?}]", exports_object(entry)));
        names.push(format!("__uatu_e{index} as {name}"));
    }
    if !bindings.is_empty() {
        let _ = writeln!(script, "const {};", bindings.join(", "));
        let _ = writeln!(script, "export {{ {} }};", names.join(", "));
    }
    let map = ConcatSourceMapBuilder::from_sourcemaps(&maps).into_sourcemap();
    let mut json: serde_json::Value =
        serde_json::from_str(&map.to_json_string()).map_err(|e| BundleError::Internal {
            shown: "the bundle's source map".into(),
            message: e.to_string(),
        })?;
    if let Some(object) = json.as_object_mut() {
        // Messages need positions, not the sources again (they are on disk or in uatu).
        object.remove("sourcesContent");
    }
    Ok(Bundle {
        script,
        source_map: json.to_string(),
    })
}

/// The modules reachable from `entry`, each after the modules its code imports;
/// an import cycle is an error naming it.
fn evaluation_order(modules: &[Option<Module>], entry: usize) -> Result<Vec<&Module>, BundleError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let get = |id: usize| {
        modules
            .get(id)
            .and_then(Option::as_ref)
            .ok_or_else(|| BundleError::Internal {
                shown: format!("module {id}"),
                message: "it was never built".into(),
            })
    };
    let mut marks = vec![Mark::New; modules.len()];
    let mut order = Vec::new();
    // Depth first without recursion: the path from the entry, each with its next import.
    let mut path: Vec<(usize, usize)> = vec![(entry, 0)];
    marks[entry] = Mark::Open;
    while let Some((id, next)) = path.last_mut() {
        let id = *id;
        let module = get(id)?;
        match module.runtime_deps.get(*next) {
            Some(&dep) => {
                *next += 1;
                match marks.get(dep).copied() {
                    Some(Mark::New) => {
                        marks[dep] = Mark::Open;
                        path.push((dep, 0));
                    }
                    Some(Mark::Open) => {
                        let from = path.iter().position(|(open, _)| *open == dep).unwrap_or(0);
                        let mut cycle = path[from..]
                            .iter()
                            .map(|(open, _)| get(*open).map(|m| m.shown.clone()))
                            .collect::<Result<Vec<_>, _>>()?;
                        cycle.push(get(dep)?.shown.clone());
                        return Err(BundleError::Cycle(cycle));
                    }
                    _ => {}
                }
            }
            None => {
                marks[id] = Mark::Done;
                order.push(module);
                path.pop();
            }
        }
    }
    Ok(order)
}

/// `shown:line:col` (1-based, columns in characters) of byte `offset` of `text`.
fn location(shown: &str, text: &str, offset: u32) -> String {
    let offset = (offset as usize).min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |last| last.chars().count()) + 1;
    format!("{shown}:{line}:{column}")
}

/// A parser or transformer diagnostic as `shown:line:col: message`.
fn located(shown: &str, text: &str, diagnostic: &OxcDiagnostic) -> String {
    match diagnostic.labels.first() {
        Some(label) => format!(
            "{}: {}",
            location(shown, text, label.offset()),
            diagnostic.message
        ),
        None => format!("{shown}: {}", diagnostic.message),
    }
}

/// The module `specifier` names, imported from `importer`: the embedded library for
/// `@uatu/spec[/...]`, a file for a relative or absolute path (with the extensions
/// TypeScript resolves), a package in `node_modules` for any other name.
fn resolve(importer: &Origin, specifier: &str) -> Option<Origin> {
    if specifier == LIBRARY_NAME {
        return library_module("src/index");
    }
    if let Some(rest) = specifier
        .strip_prefix(LIBRARY_NAME)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        return library_module(&format!("src/{rest}"));
    }
    let relative = specifier.starts_with("./") || specifier.starts_with("../") || specifier.starts_with('/');
    match importer {
        Origin::Library(path) if relative => {
            let base = normalise(&Path::new(path).parent().unwrap_or(Path::new("")).join(specifier));
            library_module(&base.to_string_lossy())
        }
        Origin::Library(_) => None,
        Origin::File(path) => {
            let dir = path.parent().unwrap_or(Path::new("/"));
            if relative {
                file_module(&normalise(&dir.join(specifier)))
            } else {
                package_module(dir, specifier)
            }
        }
    }
}

fn library_module(base: &str) -> Option<Origin> {
    let stem = base.strip_suffix(".js").unwrap_or(base);
    [base.to_string(), format!("{stem}.ts"), format!("{stem}/index.ts")]
        .iter()
        .find_map(|candidate| LIBRARY.iter().find(|(name, _)| name == candidate))
        .map(|(name, _)| Origin::Library(name))
}

/// The file `base` names: itself, or with a `.ts`/`.js` extension, or its `index`; and,
/// as TypeScript has it, `./util.js` names `./util.ts`.
fn file_module(base: &Path) -> Option<Origin> {
    let text = base.to_string_lossy();
    let mut candidates = vec![base.to_path_buf()];
    for extension in [".ts", ".mts", ".js", ".mjs", "/index.ts", "/index.js"] {
        candidates.push(PathBuf::from(format!("{text}{extension}")));
    }
    for (written, source) in [(".js", ".ts"), (".mjs", ".mts")] {
        if let Some(stem) = text.strip_suffix(written) {
            candidates.push(PathBuf::from(format!("{stem}{source}")));
        }
    }
    candidates
        .into_iter()
        .find(|candidate| candidate.is_file())
        .and_then(|found| std::fs::canonicalize(found).ok())
        .map(Origin::File)
}

/// A package in the nearest `node_modules` that has it: its `module`, else `main`,
/// else `index` file, or the file a subpath names.
fn package_module(from: &Path, specifier: &str) -> Option<Origin> {
    let scoped = specifier.starts_with('@');
    let mut parts = specifier.splitn(if scoped { 3 } else { 2 }, '/');
    let package = if scoped {
        format!("{}/{}", parts.next()?, parts.next()?)
    } else {
        parts.next()?.to_string()
    };
    let subpath = parts.next();
    for dir in from.ancestors() {
        let root = dir.join("node_modules").join(&package);
        if !root.is_dir() {
            continue;
        }
        if let Some(subpath) = subpath {
            return file_module(&normalise(&root.join(subpath)));
        }
        let manifest: serde_json::Value = std::fs::read_to_string(root.join("package.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let main = ["module", "main"]
            .iter()
            .find_map(|field| manifest.get(field).and_then(|value| value.as_str()));
        return match main {
            Some(main) => file_module(&normalise(&root.join(main))),
            None => file_module(&root.join("index")),
        };
    }
    None
}

/// `path` without `.` and `..` components (without touching the file system).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
