//! Bundling a spec and its imports into one ES module with esbuild. `@uatu/spec`
//! comes from the sources embedded in this binary, so users never run npm.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The `@uatu/spec` package, as embedded at build time.
const LIBRARY: &[(&str, &str)] = &[
    (
        "package.json",
        include_str!("../../../packages/spec/package.json"),
    ),
    (
        "src/index.ts",
        include_str!("../../../packages/spec/src/index.ts"),
    ),
    (
        "src/defaults/properties.ts",
        include_str!("../../../packages/spec/src/defaults/properties.ts"),
    ),
];

/// A bundled spec: one script and its source map, with sources named for messages.
#[derive(Debug)]
pub struct Bundle {
    /// The spec and its imports as one JavaScript script.
    pub script: String,
    /// The script's source map (JSON).
    pub source_map: String,
}

/// Why a `.ts`/`.js` spec could not be bundled into one script.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// esbuild, which bundles specs, is not installed (or `UATU_ESBUILD` names no file);
    /// says where it looked.
    #[error(
        "esbuild not found (looked for {0}); install it (`apt-get install esbuild` or `npm install -g esbuild`) \
         or set UATU_ESBUILD to its path"
    )]
    NoEsbuild(String),
    /// The spec does not compile: `file:line:col: message` lines.
    #[error("{0}")]
    Syntax(String),
    /// A file could not be read or written, or esbuild could not be run; names it.
    #[error("{0}")]
    Io(String),
}

/// The esbuild to run: `$UATU_ESBUILD`, else `esbuild` on the PATH.
pub fn esbuild() -> Result<PathBuf, BundleError> {
    if let Some(path) = std::env::var_os("UATU_ESBUILD").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(BundleError::NoEsbuild(format!("UATU_ESBUILD={}", path.display())))
        };
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("esbuild"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| BundleError::NoEsbuild("`esbuild` on PATH".into()))
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

/// Writes the embedded library under `work` (once per content) and returns its directory.
fn library_dir(work: &Path) -> Result<PathBuf, BundleError> {
    let dir = work.join(format!("uatu-spec-{}", &library_hash()[..16]));
    if dir.join("src/index.ts").is_file() {
        return Ok(dir);
    }
    for (name, text) in LIBRARY {
        let path = dir.join(name);
        crate::wasm::write_atomically(&path, text.as_bytes())
            .map_err(|e| BundleError::Io(format!("writing {}: {e}", path.display())))?;
    }
    Ok(dir)
}

/// Bundles the spec at `spec` (`.ts` or `.js`). `shown` is how messages name it.
pub fn bundle(spec: &Path, shown: &str) -> Result<Bundle, BundleError> {
    let esbuild = esbuild()?;
    let spec = std::fs::canonicalize(spec).map_err(|e| BundleError::Io(format!("{shown}: {e}")))?;
    let spec_dir = spec.parent().unwrap_or(Path::new("/")).to_path_buf();
    let work = tempfile::Builder::new()
        .prefix("uatu-build-")
        .tempdir()
        .map_err(|e| BundleError::Io(format!("creating a temporary directory: {e}")))?;
    let library = match crate::wasm::cache_dir() {
        Some(cache) => library_dir(&cache.join("lib")).or_else(|_| library_dir(work.path()))?,
        None => library_dir(work.path())?,
    };
    let outfile = work.path().join("spec.js");
    let output = Command::new(&esbuild)
        .current_dir(&spec_dir)
        .arg(&spec)
        .args([
            "--bundle",
            "--format=esm",
            "--platform=neutral",
            "--target=es2020",
            "--sourcemap=external",
            "--sources-content=false",
            "--log-level=error",
            "--color=false",
            "--main-fields=module,main",
        ])
        .arg(format!("--alias:@uatu/spec={}", library.join("src").display()))
        .arg(format!("--outfile={}", outfile.display()))
        .output()
        .map_err(|e| BundleError::Io(format!("running {}: {e}", esbuild.display())))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(BundleError::Syntax(esbuild_errors(
            &stderr, &spec_dir, &spec, shown,
        )));
    }
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| BundleError::Io(format!("reading {}: {e}", path.display())))
    };
    let script = read(&outfile)?;
    let raw_map = read(&work.path().join("spec.js.map"))?;
    let source_map = rename_sources(&raw_map, work.path(), &spec, shown, &library)
        .map_err(|e| BundleError::Io(format!("esbuild's source map: {e}")))?;
    Ok(Bundle { script, source_map })
}

/// How a source is named in messages: the spec as the user named it, the library
/// as `@uatu/spec/...`, anything else relative to the spec's directory.
fn display_name(path: &Path, spec: &Path, shown: &str, library: &Path) -> String {
    let spec_dir = spec.parent().unwrap_or(Path::new("/"));
    if path == spec {
        shown.to_string()
    } else if let Ok(rest) = path.strip_prefix(library.join("src")) {
        format!("@uatu/spec/{}", rest.display())
    } else if let Ok(rest) = path.strip_prefix(spec_dir) {
        let shown_dir = Path::new(shown).parent().unwrap_or(Path::new(""));
        shown_dir.join(rest).display().to_string()
    } else {
        path.display().to_string()
    }
}

fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn rename_sources(
    raw: &str,
    out_dir: &Path,
    spec: &Path,
    shown: &str,
    library: &Path,
) -> Result<String, String> {
    let mut map: serde_json::Value = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    let out_dir = std::fs::canonicalize(out_dir).unwrap_or_else(|_| out_dir.to_path_buf());
    let library = std::fs::canonicalize(library).unwrap_or_else(|_| library.to_path_buf());
    if let Some(sources) = map.get_mut("sources").and_then(|s| s.as_array_mut()) {
        for source in sources.iter_mut() {
            if let Some(text) = source.as_str() {
                let path = normalise(&out_dir.join(text));
                *source = serde_json::Value::String(display_name(&path, spec, shown, &library));
            }
        }
    }
    serde_json::to_string(&map).map_err(|e| e.to_string())
}

/// Names the embedded library's files `@uatu/spec/...` in esbuild's messages
/// rather than by their place in the cache.
fn library_names(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(start) = rest.find('"') {
        let Some(len) = rest[start + 1..].find('"') else {
            break;
        };
        let quoted = &rest[start + 1..start + 1 + len];
        out.push_str(&rest[..start]);
        match quoted
            .find("/uatu-spec-")
            .and_then(|at| quoted[at..].find("/src/").map(|s| at + s + 5))
        {
            Some(file) => out.push_str(&format!("\"@uatu/spec/{}\"", &quoted[file..])),
            None => out.push_str(&format!("\"{quoted}\"")),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// esbuild's error report as `file:line:col: message` lines.
fn esbuild_errors(stderr: &str, spec_dir: &Path, spec: &Path, shown: &str) -> String {
    let mut out = Vec::new();
    let mut message: Option<String> = None;
    for line in stderr.lines() {
        if let Some(text) = line.split_once("[ERROR] ").map(|(_, m)| library_names(m.trim())) {
            if let Some(pending) = message.take() {
                out.push(format!("{shown}: {pending}"));
            }
            message = Some(text);
            continue;
        }
        let trimmed = line.trim();
        if let Some(pending) = &message
            && let Some(location) = trimmed.strip_suffix(':')
        {
            let mut parts = location.rsplitn(3, ':');
            if let (Some(col), Some(row), Some(file)) = (parts.next(), parts.next(), parts.next())
                && let (Ok(row), Ok(col)) = (row.parse::<u32>(), col.parse::<u32>())
            {
                let file = normalise(&spec_dir.join(file));
                let name = display_name(&file, spec, shown, Path::new("/nonexistent"));
                // esbuild columns are 0-based; editors and compilers count from 1.
                out.push(format!("{name}:{row}:{}: {pending}", col + 1));
                message = None;
            }
        }
    }
    if let Some(pending) = message {
        out.push(format!("{shown}: {pending}"));
    }
    if out.is_empty() {
        format!("{shown}: esbuild failed: {}", stderr.trim())
    } else {
        out.join("\n")
    }
}
