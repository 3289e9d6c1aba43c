//! `uatu init`: the files that start uatu in an app's repository — a spec that runs as it
//! is, `uatu.toml`, an npm project for the spec's types and a CI job — written all at once
//! or not at all, and never over an existing file unless asked.
//!
//! ```text
//! uatu.toml                    the settings `uatu run` reads from this directory
//! uatu/spec.ts                 the starter spec (one per device kind, in `templates/`)
//! uatu/package.json            @uatu/spec and TypeScript, for the editor and `npx tsc`
//! uatu/tsconfig.json
//! uatu/.gitignore              node_modules/, runs/
//! .github/workflows/uatu.yml   a CI job that installs uatu and runs the spec
//! ```

use std::path::{Path, PathBuf};

/// The app uatu will explore: the device kind, and what names the app on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum App {
    /// The simulated Folio app (`--device sim`): runs anywhere, nothing to set up.
    Sim,
    /// A web app in Chromium (`--device web`) at this start page.
    Web {
        /// The app's start page (`http://` or `https://`).
        url: String,
    },
    /// An Android app (`--device android`) with this package name (`bundle-id`).
    Android {
        /// The application id, e.g. `com.example.app`.
        package: String,
    },
}

/// Why `uatu init` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// Some of the files exist; `--force` replaces them.
    #[error(
        "{} already exist{}: nothing was written; `--force` replaces {}",
        list(.0),
        if .0.len() == 1 { "s" } else { "" },
        if .0.len() == 1 { "it" } else { "them" }
    )]
    Exists(Vec<PathBuf>),
    /// The web app's URL cannot be used.
    #[error("`{given}` is not an http:// or https:// URL of the app's start page")]
    Url {
        /// The URL as given.
        given: String,
    },
    /// The Android package name cannot be used.
    #[error(
        "`{given}` is not an Android package name (e.g. com.example.app: two or more dot-separated parts of letters, digits and `_`, each starting with a letter)"
    )]
    Package {
        /// The name as given.
        given: String,
    },
    /// A file could not be written; none of the files were put in place.
    #[error("cannot write {path}: nothing was written")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl App {
    /// The app, checked: a web URL must be http(s), an Android package a package name.
    pub fn checked(self) -> Result<App, InitError> {
        match &self {
            App::Sim => {}
            App::Web { url } => {
                let parsed = url::Url::parse(url).map_err(|_| InitError::Url { given: url.clone() })?;
                if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                    return Err(InitError::Url { given: url.clone() });
                }
            }
            App::Android { package } => {
                let part_ok = |part: &str| {
                    part.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                        && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                };
                if package.split('.').count() < 2 || !package.split('.').all(part_ok) {
                    return Err(InitError::Package {
                        given: package.clone(),
                    });
                }
            }
        }
        Ok(self)
    }

    /// The `--device` spelling of its kind.
    pub fn device(&self) -> &'static str {
        match self {
            App::Sim => "sim",
            App::Web { .. } => "web",
            App::Android { .. } => "android",
        }
    }
}

/// One file `uatu init` writes: its path relative to the project, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Relative to the project directory.
    pub path: PathBuf,
    /// The whole file.
    pub text: String,
}

/// Where the spec and its npm project go, relative to the project directory.
pub const SPEC_DIR: &str = "uatu";

/// The documentation of this version of uatu, for the comments of the files written.
pub fn docs_url() -> String {
    format!("{}/blob/v{}/docs", env!("CARGO_PKG_REPOSITORY"), crate::VERSION)
}

/// Where this version's releases are published (`install.sh` and the binaries).
pub fn releases_url() -> String {
    format!("{}/releases", env!("CARGO_PKG_REPOSITORY"))
}

/// Every file `uatu init` writes for `app`.
pub fn files(app: &App) -> Vec<ProjectFile> {
    let spec = match app {
        App::Sim => include_str!("templates/sim.ts"),
        App::Web { .. } => include_str!("templates/web.ts"),
        App::Android { .. } => include_str!("templates/android.ts"),
    };
    let file = |path: &str, text: String| ProjectFile {
        path: PathBuf::from(path),
        text: text.replace("{{docs}}", &docs_url()),
    };
    vec![
        file("uatu.toml", settings(app)),
        file("uatu/spec.ts", spec.to_string()),
        file("uatu/package.json", package_json()),
        file(
            "uatu/tsconfig.json",
            include_str!("templates/tsconfig.json").to_string(),
        ),
        file("uatu/.gitignore", "node_modules/\nruns/\n".to_string()),
        file(".github/workflows/uatu.yml", ci_job(app)),
    ]
}

/// `uatu.toml`: the spec, the device and the app, a first run's length, where runs go.
fn settings(app: &App) -> String {
    let device = match app {
        App::Sim => "device = \"sim\"                 # the simulated Folio app".to_string(),
        App::Web { url } => format!(
            "device = \"web\"                 # Chromium, started by uatu\nurl = {}",
            toml_string(url)
        ),
        App::Android { package } => format!(
            "device = \"android\"             # the device adb sees; \"android:SERIAL\" picks one\nbundle-id = {}",
            toml_string(package)
        ),
    };
    include_str!("templates/uatu.toml").replace("{{device}}", &device)
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// The npm project of the spec: `@uatu/spec` at this binary's version, and TypeScript at
/// the version `@uatu/spec` itself is built with.
fn package_json() -> String {
    let manifest = serde_json::json!({
        "name": "uatu-spec",
        "private": true,
        "type": "module",
        "description": "The uatu spec of this app (uatu run reads it through ../uatu.toml)",
        "scripts": { "typecheck": "tsc" },
        "devDependencies": {
            "@uatu/spec": crate::VERSION,
            "typescript": crate::spec::typescript_version(),
        },
    });
    // A `json!` object always prints.
    serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n"
}

/// `.github/workflows/uatu.yml`: installs this version of uatu from its release and runs
/// the spec; what a device kind needs first goes before.
fn ci_job(app: &App) -> String {
    let (job, prepare) = match app {
        App::Sim => (String::new(), String::new()),
        // Debian's Chromium is the browser the web device starts.
        App::Web { url } => (
            "    container: debian:bookworm\n".to_string(),
            format!(
                r"      - name: Chromium, and curl to install uatu
        run: |
          apt-get update -qq
          apt-get install -y -qq --no-install-recommends chromium curl ca-certificates
      # uatu opens {url}: if this repository serves it, start it here, e.g.
      # - run: npm ci && (npm start &) && npx wait-on {url}
"
            ),
        ),
        App::Android { .. } => (
            String::new(),
            "      # uatu drives the app through adb and its sidecar ({{docs}}/devices.md): start an\n\
             \x20     # emulator with the app installed (e.g. reactivecircus/android-emulator-runner)\n\
             \x20     # and run uatu in its `script`.\n"
                .to_string(),
        ),
    };
    include_str!("templates/uatu.yml")
        .replace("{{job}}", &job)
        .replace("{{prepare}}", &prepare)
        .replace("{{releases}}", &releases_url())
        .replace("{{version}}", crate::VERSION)
}

/// Writes `files` under `dir`: all of them, or none. Without `force` an existing file is
/// an error that names every one. Each file is first written beside its place, then all
/// are renamed into place; a failure before that removes what was written.
pub fn write(dir: &Path, files: &[ProjectFile], force: bool) -> Result<Vec<PathBuf>, InitError> {
    let targets: Vec<PathBuf> = files.iter().map(|file| dir.join(&file.path)).collect();
    if !force {
        let existing: Vec<PathBuf> = targets.iter().filter(|target| target.exists()).cloned().collect();
        if !existing.is_empty() {
            return Err(InitError::Exists(existing));
        }
    }
    let mut staged: Vec<PathBuf> = Vec::new();
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let staging = (|| -> Result<(), InitError> {
        for (file, target) in files.iter().zip(&targets) {
            let parent = target.parent().unwrap_or(dir);
            let missing = parent
                .ancestors()
                .take_while(|ancestor| !ancestor.exists())
                .map(Path::to_path_buf)
                .collect::<Vec<_>>();
            std::fs::create_dir_all(parent).map_err(|source| InitError::Write {
                path: target.clone(),
                source,
            })?;
            created_dirs.extend(missing);
            let name = target
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let temporary = parent.join(format!(".{name}.{}.partial", std::process::id()));
            std::fs::write(&temporary, &file.text).map_err(|source| InitError::Write {
                path: target.clone(),
                source,
            })?;
            staged.push(temporary);
        }
        Ok(())
    })();
    if let Err(error) = staging {
        for temporary in &staged {
            let _ = std::fs::remove_file(temporary);
        }
        // Deepest first: each was empty but for what was staged.
        created_dirs.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
        for created in &created_dirs {
            let _ = std::fs::remove_dir(created);
        }
        return Err(error);
    }
    for (temporary, target) in staged.iter().zip(&targets) {
        std::fs::rename(temporary, target).map_err(|source| InitError::Write {
            path: target.clone(),
            source,
        })?;
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(next) = stack.pop() {
            for entry in std::fs::read_dir(&next).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    found.push(path.strip_prefix(dir).unwrap().display().to_string());
                }
            }
        }
        found.sort();
        found
    }

    #[test]
    fn writes_every_file_and_refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let files = files(&App::Sim);
        write(dir.path(), &files, false).unwrap();
        assert_eq!(
            names(dir.path()),
            [
                ".github/workflows/uatu.yml",
                "uatu.toml",
                "uatu/.gitignore",
                "uatu/package.json",
                "uatu/spec.ts",
                "uatu/tsconfig.json",
            ]
        );
        std::fs::write(dir.path().join("uatu/spec.ts"), "mine").unwrap();
        let error = write(dir.path(), &files, false).unwrap_err();
        assert!(
            matches!(&error, InitError::Exists(paths) if paths.len() == files.len()),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("nothing was written; `--force` replaces them"),
            "{error}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("uatu/spec.ts")).unwrap(),
            "mine"
        );
        write(dir.path(), &files, true).unwrap();
        assert_ne!(
            std::fs::read_to_string(dir.path().join("uatu/spec.ts")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn a_file_that_cannot_be_written_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // `.github` is a file: the workflow cannot be written under it, after the others were staged.
        std::fs::write(dir.path().join(".github"), "in the way").unwrap();
        let error = write(dir.path(), &files(&App::Sim), false).unwrap_err();
        assert!(matches!(error, InitError::Write { .. }), "{error}");
        assert_eq!(names(dir.path()), [".github"]);
    }

    #[test]
    fn checks_the_url_and_the_package() {
        for url in ["http://127.0.0.1:8080/", "https://staging.example.com/app"] {
            assert!(App::Web { url: url.into() }.checked().is_ok(), "{url}");
        }
        for url in ["localhost:8080", "ftp://example.com/", "not a url"] {
            assert!(App::Web { url: url.into() }.checked().is_err(), "{url}");
        }
        for package in ["com.example.app", "app.folio", "org.x_y.z9"] {
            assert!(
                App::Android {
                    package: package.into()
                }
                .checked()
                .is_ok(),
                "{package}"
            );
        }
        for package in ["app", "com..app", "com.1app", "com.exa-mple"] {
            assert!(
                App::Android {
                    package: package.into()
                }
                .checked()
                .is_err(),
                "{package}"
            );
        }
    }

    #[test]
    fn the_settings_name_the_app_and_parse() {
        let web = settings(&App::Web {
            url: "http://127.0.0.1:8080/".into(),
        });
        let parsed: toml::Table = toml::from_str(&web).unwrap();
        assert_eq!(parsed["device"].as_str(), Some("web"));
        assert_eq!(parsed["url"].as_str(), Some("http://127.0.0.1:8080/"));
        assert_eq!(parsed["spec"].as_str(), Some("uatu/spec.ts"));
        let android: toml::Table = toml::from_str(&settings(&App::Android {
            package: "com.example.app".into(),
        }))
        .unwrap();
        assert_eq!(android["bundle-id"].as_str(), Some("com.example.app"));
    }

    #[test]
    fn the_package_json_asks_for_this_version_of_the_types() {
        let manifest: serde_json::Value = serde_json::from_str(&package_json()).unwrap();
        assert_eq!(
            manifest["devDependencies"]["@uatu/spec"].as_str(),
            Some(crate::VERSION)
        );
        assert!(
            manifest["devDependencies"]["typescript"]
                .as_str()
                .is_some_and(|v| !v.is_empty())
        );
    }
}
