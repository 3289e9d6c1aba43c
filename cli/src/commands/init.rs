//! `uatu init`: start uatu in an app's repository. What the flags do not say is asked on
//! the terminal; the library writes the files (all of them or none).

use std::io::BufRead;
use std::path::PathBuf;

use uatu::ExitStatus;
use uatu::init::App;

use crate::errors::CliError;
use crate::print;

/// The device kinds `uatu init` writes a starter spec for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InitDevice {
    /// The simulated Folio app: runs anywhere, nothing to set up.
    Sim,
    /// A web app in Chromium (give --url).
    Web,
    /// An Android app through adb and the sidecar (give --package).
    Android,
}

/// `uatu init [DIR] [--device KIND] [--url URL | --package NAME] [--force]`.
#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// The app's repository, where the files go.
    #[arg(default_value = ".", value_name = "DIR")]
    pub dir: PathBuf,
    /// The device the app runs on.
    #[arg(long, value_enum)]
    pub device: Option<InitDevice>,
    /// Web: the app's start page (http:// or https://).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Android: the app's package name (application id), e.g. com.example.app.
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// Replace files that already exist.
    #[arg(long)]
    pub force: bool,
}

impl InitArgs {
    /// Asks for what the flags did not say, writes the project, says what to do next.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let mut answers = std::io::stdin().lock();
        let device = match self.device {
            Some(device) => device,
            None => match ask(&mut answers, "The app runs on [sim, web, android]", "device")?.as_str() {
                "sim" => InitDevice::Sim,
                "web" => InitDevice::Web,
                "android" => InitDevice::Android,
                other => {
                    return Err(CliError::bad_flag(
                        "device",
                        format!("`{other}` is not a device kind uatu init knows: sim, web or android"),
                    ));
                }
            },
        };
        let app = match device {
            InitDevice::Sim => App::Sim,
            InitDevice::Web => App::Web {
                url: given_or_asked(self.url, &mut answers, "The app's start page (http://…)", "url")?,
            },
            InitDevice::Android => App::Android {
                package: given_or_asked(
                    self.package,
                    &mut answers,
                    "The app's package name (com.example.app)",
                    "package",
                )?,
            },
        };
        let app = app.checked()?;
        let files = uatu::init::files(&app);
        let written = uatu::init::write(&self.dir, &files, self.force)?;
        print::initialized(&self.dir, &written, &app);
        Ok(ExitStatus::Ok)
    }
}

/// `given`, or else an answer read from `answers` after a prompt.
fn given_or_asked(
    given: Option<String>,
    answers: &mut impl BufRead,
    prompt: &str,
    flag: &'static str,
) -> Result<String, CliError> {
    match given {
        Some(value) => Ok(value),
        None => ask(answers, prompt, flag),
    }
}

/// Asks `prompt` and reads one line; no answer (end of input, an empty line) is an error
/// that names the flag to give instead.
fn ask(answers: &mut impl BufRead, prompt: &str, flag: &'static str) -> Result<String, CliError> {
    print::prompt(prompt);
    let mut line = String::new();
    answers.read_line(&mut line).map_err(CliError::Input)?;
    let answer = line.trim();
    if answer.is_empty() {
        print::end_of_prompt();
        return Err(CliError::bad_flag(
            flag,
            format!("no answer to \"{prompt}\" on standard input; give --{flag}"),
        ));
    }
    Ok(answer.to_string())
}
