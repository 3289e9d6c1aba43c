//! The TypeScript users read and install, checked with `tsc --noEmit` (TypeScript from npm,
//! installed by `dev/setup`): the example specs and the docs' snippets against
//! `@uatu/spec`'s source, and a spec project outside the repository against the package as
//! `npm pack` makes it, which is what an editor sees once the package is published. And
//! `uatu build`'s warning when that project's `@uatu/spec` is another version.

use std::path::Path;
use std::process::Command;

use crate::support::plugins::repo_root;
use crate::support::printed;
use crate::support::typescript::{check_project, install_packed_spec_package, packed_spec_package};

#[test]
fn the_examples_type_check() {
    let output = check_project(&repo_root());
    assert!(
        output.status.success(),
        "tsc over examples/:\n{}",
        printed(&output)
    );
}

/// A fenced ` ```ts ` block of a Markdown file.
struct Snippet {
    /// The Markdown file, relative to the repository.
    doc: String,
    /// The line of the opening fence (1-based): snippet line `n` is doc line `fence + n`.
    fence: usize,
    code: String,
}

/// The ` ```ts ` (or ` ```typescript `) blocks of `text`. A block whose fence says
/// ` ```ts partial ` (a signature list, a fragment naming things defined elsewhere) is not
/// meant to compile alone, and is left out.
fn snippets(doc: &str, text: &str) -> Vec<Snippet> {
    let mut found = Vec::new();
    let mut open: Option<Snippet> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            Some(snippet) if trimmed.starts_with("```") => found.push(snippet),
            Some(mut snippet) => {
                snippet.code.push_str(line);
                snippet.code.push('\n');
                open = Some(snippet);
            }
            None => {
                let Some(info) = trimmed.strip_prefix("```") else {
                    continue;
                };
                let mut words = info.split_whitespace();
                let language = words.next().unwrap_or_default();
                if matches!(language, "ts" | "typescript") && !words.any(|word| word == "partial") {
                    open = Some(Snippet {
                        doc: doc.to_string(),
                        fence: index + 1,
                        code: String::new(),
                    });
                }
            }
        }
    }
    found
}

/// Every checked snippet of the Markdown files users read.
fn doc_snippets() -> Vec<Snippet> {
    let root = repo_root();
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("reads docs/")
        .flatten()
        .map(|entry| format!("docs/{}", entry.file_name().to_string_lossy()))
        .filter(|name| name.ends_with(".md"))
        .collect();
    docs.sort();
    docs.extend(["README.md".to_string(), "packages/spec/README.md".to_string()]);
    docs.iter()
        .flat_map(|doc| {
            let text = std::fs::read_to_string(root.join(doc)).unwrap_or_else(|e| panic!("reads {doc}: {e}"));
            snippets(doc, &text)
        })
        .collect()
}

/// `tsc` names a snippet's file `<n>.ts(line,col): …`; say `doc.md:line:col: …` instead.
fn located_in_docs(tsc_output: &str, snippets: &[Snippet]) -> String {
    tsc_output
        .lines()
        .map(|line| {
            let parsed = line.split_once(".ts(").and_then(|(file, rest)| {
                let snippet = snippets.get(file.rsplit('/').next()?.parse::<usize>().ok()?)?;
                let (position, message) = rest.split_once(')')?;
                let (row, column) = position.split_once(',')?;
                let row = snippet.fence + row.parse::<usize>().ok()?;
                Some(format!("{}:{row}:{column}{message}", snippet.doc))
            });
            parsed.unwrap_or_else(|| line.to_string())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_docs_typescript_snippets_type_check() {
    let snippets = doc_snippets();
    assert!(
        snippets
            .iter()
            .any(|snippet| snippet.doc == "docs/writing-specs.md"),
        "the complete spec of docs/writing-specs.md is checked"
    );
    let dir = tempfile::tempdir().unwrap();
    for (index, snippet) in snippets.iter().enumerate() {
        // Each snippet is a module of its own, so that two snippets may declare one name.
        let code = format!("{}export {{}};\n", snippet.code);
        std::fs::write(dir.path().join(format!("{index}.ts")), code).unwrap();
    }
    let config = serde_json::json!({
        "extends": repo_root().join("tsconfig.json"),
        "include": ["*.ts"],
    });
    std::fs::write(dir.path().join("tsconfig.json"), config.to_string()).unwrap();
    let output = check_project(dir.path());
    assert!(
        output.status.success(),
        "the docs' ```ts snippets do not type-check (mark one that is not meant to compile alone ```ts partial):\n{}",
        located_in_docs(&printed(&output), &snippets)
    );
}

#[test]
fn a_failing_snippet_is_named_by_its_doc_line() {
    let doc = "Intro.\n\n```ts\nimport { always } from \"@uatu/spec\";\nexport const p = always(42);\n```\n\n```ts partial\nalways(p: FormulaLike): Formula\n```\n";
    let found = snippets("docs/example.md", doc);
    assert_eq!(found.len(), 1, "the partial block is left out");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("0.ts"), &found[0].code).unwrap();
    let config = serde_json::json!({ "extends": repo_root().join("tsconfig.json"), "include": ["*.ts"] });
    std::fs::write(dir.path().join("tsconfig.json"), config.to_string()).unwrap();
    let output = check_project(dir.path());
    assert!(!output.status.success(), "always(42) is a type error");
    let located = located_in_docs(&printed(&output), &found);
    assert!(
        located.contains("docs/example.md:5:25: error TS2345"),
        "{located}"
    );
}

/// The package as published: declarations and JavaScript built by `prepack`, the sources
/// the declaration maps point to, the README; its version is the binary's.
#[test]
fn the_package_packs_types_runtime_and_readme() {
    let packed = packed_spec_package();
    for file in [
        "package.json",
        "README.md",
        "dist/index.d.ts",
        "dist/index.js",
        "dist/defaults/properties.d.ts",
        "dist/defaults/properties.js",
        "src/index.ts",
    ] {
        assert!(
            packed.files.iter().any(|packed| packed == file),
            "{file} not in {:?}",
            packed.files
        );
    }
    let name = packed.tarball.file_name().unwrap().to_string_lossy();
    assert_eq!(name, format!("uatu-spec-{}.tgz", uatu::VERSION));
}

const FAULTY_SPEC: &str = "import { always, extract } from \"@uatu/spec\";\n\
    const count = extract((state) => state.snapshots[\"count\"] as number);\n\
    export const properties = { positive: always(() => count.current.length > 0) };\n";

#[test]
fn a_spec_project_outside_the_repository_type_checks_against_the_packed_package() {
    let project = tempfile::tempdir().unwrap();
    let project = project.path();
    std::fs::write(
        project.join("package.json"),
        r#"{ "name": "app-specs", "private": true, "type": "module" }"#,
    )
    .unwrap();
    install_packed_spec_package(project);
    std::fs::copy(
        repo_root().join("examples/folio/spec.ts"),
        project.join("spec.ts"),
    )
    .unwrap();
    let config = serde_json::json!({
        "compilerOptions": {
            "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
            "strict": true, "noEmit": true,
        },
        "include": ["*.ts"],
    });
    std::fs::write(project.join("tsconfig.json"), config.to_string()).unwrap();
    let output = check_project(project);
    assert!(
        output.status.success(),
        "the Folio spec against the packed types:\n{}",
        printed(&output)
    );

    // The types are really checked: a spec that misuses a value fails, at its line.
    std::fs::write(project.join("faulty.ts"), FAULTY_SPEC).unwrap();
    let output = check_project(project);
    let said = printed(&output);
    assert!(!output.status.success(), "a type error fails tsc:\n{said}");
    assert!(said.contains("faulty.ts(3,"), "{said}");
    assert!(
        said.contains("Property 'length' does not exist on type 'number'"),
        "{said}"
    );
}

fn uatu_build(spec: &Path, cache: &Path) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .arg("build")
        .arg(spec)
        .arg("-o")
        .arg(spec.with_extension("wasm"))
        .env("UATU_CACHE_DIR", cache)
        .output()
        .expect("runs uatu");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn uatu_build_warns_when_the_installed_package_is_another_version() {
    let project = tempfile::tempdir().unwrap();
    let project = project.path();
    std::fs::write(
        project.join("package.json"),
        r#"{ "name": "app-specs", "private": true }"#,
    )
    .unwrap();
    install_packed_spec_package(project);
    let specs = project.join("specs");
    std::fs::create_dir(&specs).unwrap();
    let spec = specs.join("spec.ts");
    std::fs::copy(repo_root().join("examples/folio/spec.ts"), &spec).unwrap();
    let cache = project.join("cache");

    let (built, stderr) = uatu_build(&spec, &cache);
    assert!(built, "{stderr}");
    assert!(
        !stderr.contains("warning"),
        "the same version: no warning\n{stderr}"
    );

    let installed = project.join("node_modules/@uatu/spec/package.json");
    let manifest = std::fs::read_to_string(&installed).unwrap();
    let older = manifest.replace(
        &format!("\"version\": \"{}\"", uatu::VERSION),
        "\"version\": \"0.0.1\"",
    );
    assert_ne!(manifest, older, "the installed package.json names its version");
    std::fs::write(&installed, older).unwrap();
    let (built, stderr) = uatu_build(&spec, &cache);
    assert!(built, "a warning, not an error\n{stderr}");
    let installed = std::fs::canonicalize(&installed).unwrap();
    assert!(
        stderr.contains(&format!(
            "warning: {} is @uatu/spec 0.0.1, but this uatu runs specs with its own @uatu/spec {}",
            installed.display(),
            uatu::VERSION
        )),
        "{stderr}"
    );
}
