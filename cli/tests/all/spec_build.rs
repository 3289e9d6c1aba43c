//! `uatu build` and spec modules: errors at build and load time, ABI/provider
//! stamps, and specs given as `.ts` (built on the fly) or `.wasm`.

use std::path::{Path, PathBuf};
use std::process::Command;

use uatu::spec::{SpecError, SpecInstance, SpecLimits, SpecModule};

fn uatu() -> Command {
    Command::new(env!("CARGO_BIN_EXE_uatu"))
}

fn spec_file(dir: &Path, name: &str, source: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, source).expect("writes the spec file");
    path
}

const GOOD: &str = r#"import { always, waitOnce } from "@uatu/spec";
export const properties = { p: always(() => true) };
export const actionsRoot = waitOnce;
"#;

#[test]
fn build_writes_a_loadable_module() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "spec.ts", GOOD);
    let out = dir.path().join("out/spec.wasm");
    let status = uatu()
        .arg("build")
        .arg(&spec)
        .arg("-o")
        .arg(&out)
        .env("UATU_CACHE_DIR", dir.path().join("cache"))
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..4], b"\0asm");
    assert!(
        wasmtime::Module::validate(&wasmtime::Engine::default(), &bytes).is_ok(),
        "a valid Wasm module"
    );
    let module = SpecModule::load(&out).unwrap();
    let mut instance = SpecInstance::new(&module, SpecLimits::default()).unwrap();
    let description = instance.load(&module, 3).unwrap();
    assert_eq!(description.properties[0].0, "p");
    // No temporary file is left beside the output.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[test]
fn syntax_error_fails_build_with_file_line_col() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(
        dir.path(),
        "broken.ts",
        "import { always } from \"@uatu/spec\";\n\nexport const properties = { p: always(() => true) ;\n",
    );
    let out = dir.path().join("broken.wasm");
    let output = uatu()
        .arg("build")
        .arg(&spec)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("broken.ts:3:51: Expected `,` or `}` but found `;`"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// `uatu build` of `spec` fails with a usage error; its stderr.
fn build_error(spec: &Path) -> String {
    let output = uatu().arg("build").arg(spec).output().expect("runs uatu build");
    assert_eq!(output.status.code(), Some(2));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn importing_a_missing_file_fails_build_with_file_line_col() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(
        dir.path(),
        "spec.ts",
        "import { always } from \"@uatu/spec\";\nimport { helper } from \"./nowhere\";\nexport const properties = { p: always(helper) };\n",
    );
    let stderr = build_error(&spec);
    assert!(
        stderr.contains("spec.ts:2:24: Could not resolve \"./nowhere\""),
        "{stderr}"
    );
}

#[test]
fn import_cycle_is_refused_naming_the_modules() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(
        dir.path(),
        "spec.ts",
        "import { always } from \"@uatu/spec\";\nimport { a } from \"./a\";\nexport const properties = { p: always(() => a()) };\n",
    );
    spec_file(
        dir.path(),
        "a.ts",
        "import { b } from \"./b\";\nexport const a = () => b();\n",
    );
    spec_file(
        dir.path(),
        "b.ts",
        "import { a } from \"./a\";\nexport const b = () => a !== undefined;\n",
    );
    let stderr = build_error(&spec);
    assert!(stderr.contains("import cycle: "), "{stderr}");
    assert!(
        stderr.contains("a.ts → ") && stderr.contains("b.ts → "),
        "{stderr}"
    );
}

#[test]
fn importing_a_missing_export_fails_build() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(
        dir.path(),
        "imports.ts",
        "import { alwayz } from \"@uatu/spec\";\nexport const properties = { p: alwayz(() => true) };\n",
    );
    let output = uatu().arg("build").arg(&spec).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("imports.ts:1:10:") && stderr.contains("alwayz"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\"@uatu/spec/index.ts\""),
        "names the library, not the cache: {stderr}"
    );
}

fn load_error(source: &str) -> String {
    let dir = tempfile::tempdir().expect("creates a temporary directory");
    let spec = spec_file(dir.path(), "spec.ts", source);
    let module = uatu::spec::build(&spec).expect("the spec builds");
    let mut instance = SpecInstance::new(&module, SpecLimits::default()).expect("the sandbox is set up");
    match instance.load(&module, 1) {
        Err(error @ SpecError::Thrown { .. }) => error.to_string(),
        other => panic!("expected a load error, got {other:?}"),
    }
}

#[test]
fn invalid_specs_fail_at_load() {
    let not_formula = load_error(
        "import { waitOnce } from \"@uatu/spec\";\nexport const properties = { p: 3 };\nexport const actionsRoot = waitOnce;\n",
    );
    assert!(
        not_formula.contains("property \"p\" is not a formula"),
        "{not_formula}"
    );
    assert!(not_formula.contains("loading"), "{not_formula}");

    let weight = load_error(
        "import { always, weighted, waitOnce } from \"@uatu/spec\";\nexport const properties = { p: always(true) };\nexport const actionsRoot = weighted([1, waitOnce], [0, waitOnce]);\n",
    );
    assert!(weight.contains("weight must be a positive number"), "{weight}");
    assert!(weight.contains("spec.ts:3:"), "points at the line: {weight}");

    let not_generator = load_error(
        "import { always, weighted } from \"@uatu/spec\";\nexport const properties = { p: always(true) };\nexport const actionsRoot = weighted([1, () => []]);\n",
    );
    assert!(not_generator.contains("is not a generator"), "{not_generator}");

    let root = load_error(
        "import { always } from \"@uatu/spec\";\nexport const properties = { p: always(true) };\nexport const actions = [1, 2];\n",
    );
    assert!(root.contains("not a generator"), "{root}");
}

#[test]
fn module_for_another_abi_or_provider_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "spec.ts", GOOD);
    let module = uatu::spec::build(&spec).unwrap();
    for (abi, provider) in [
        (module.abi + 1, module.provider_sha256.clone()),
        (module.abi, "0".repeat(64)),
    ] {
        let other = SpecModule {
            abi,
            provider_sha256: provider,
            ..module.clone()
        };
        let path = dir.path().join("other.wasm");
        std::fs::write(&path, other.to_bytes()).unwrap();
        let error = format!("{:#}", SpecModule::load(&path).unwrap_err());
        assert!(error.contains(&format!("built for spec ABI {abi}")), "{error}");
        assert!(
            error.contains(&format!("has spec ABI {}", uatu::spec::SPEC_ABI)),
            "{error}"
        );
        assert!(error.contains("rebuild with: uatu build"), "{error}");
    }
    let path = dir.path().join("garbage.wasm");
    std::fs::write(&path, b"not wasm").unwrap();
    assert!(format!("{:#}", SpecModule::load(&path).unwrap_err()).contains("not a uatu spec module"));
}

#[test]
fn typescript_specs_are_built_on_the_fly_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "spec.ts", GOOD);
    let first = SpecModule::load(&spec).unwrap();
    let second = SpecModule::load(&spec).unwrap();
    assert_eq!(first, second);
    std::fs::write(&spec, GOOD.replace("p:", "q:")).unwrap();
    let changed = SpecModule::load(&spec).unwrap();
    assert_ne!(changed.bytecode, first.bytecode, "a changed source is rebuilt");
}
