//! `uatu build`: compile a spec once, to a WebAssembly module.

use std::path::PathBuf;

use uatu::ExitStatus;

use crate::errors::CliError;
use crate::print;

/// `uatu build SPEC [-o FILE]`.
#[derive(Debug, Clone, clap::Args)]
pub struct BuildArgs {
    /// The spec to compile (`.ts` or `.js`).
    pub spec: PathBuf,
    /// Where to write the module [default: the spec's path with `.wasm`].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl BuildArgs {
    /// Builds the module and writes it atomically.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let output = self.output.unwrap_or_else(|| self.spec.with_extension("wasm"));
        let module = uatu::spec::build(&self.spec).map_err(uatu::spec::LoadError::from)?;
        uatu::wasm::write_atomically(&output, &module.to_bytes())
            .map_err(|source| uatu::Error::io("writing", &output, source))?;
        print::built(&self.spec, &output, module.bytecode.len());
        if let Some(other) = uatu::spec::other_library_version(&self.spec) {
            print::warning(&other);
        }
        Ok(ExitStatus::Ok)
    }
}
