//! The QuickJS provider of uatu's spec runtime, built for `wasm32-wasip1`.
//!
//! The host instantiates this module once per spec instance and talks to it
//! through four entry points, with data passed through the provider's own
//! memory (`uatu_input` returns a buffer the host writes into):
//!
//! - `uatu_compile(len)`: the input is a JavaScript bundle; the output its QuickJS bytecode.
//! - `uatu_load(len)`: the input is `{"bytecode": <offset, len>}`-free: the raw bytecode
//!   followed by nothing; evaluates the spec module once and calls the runtime's
//!   `load(namespace, seed)`, returning the spec's description as JSON.
//! - `uatu_step(len)`: the input is the step's state as JSON; calls the runtime's
//!   `step` in the already-evaluated module and returns its results as JSON.
//! - `uatu_generate(place)`: the candidates of the action tree under `place`, over
//!   the last step's state, as JSON, or nothing when it offers nothing (the host
//!   draws a branch, then asks for it).
//!
//! A step's state and results are transcoded between JSON bytes and JavaScript
//! values in Rust (javy's `json` module), not with `JSON.parse`/`JSON.stringify`
//! over JavaScript strings: they cross at every step.
//!
//! Each returns a pointer to three `u32`s: status (0 ok, 1 JavaScript error as
//! JSON `{message, stack}`, 2 provider error as text), output pointer, output length.
//!
//! Selector queries over the accessibility tree are answered by the host
//! (`uatu_host.query` / `uatu_host.take`), so the hierarchy never has to be
//! parsed by JavaScript. `uatu_host.mark` tells the host which phase of a step
//! runs, so that it can time them.

#![allow(static_mut_refs)]

use javy_plugin_api::import_namespace;
use javy_plugin_api::javy::quickjs::{self, Ctx, Function, Module, Object, Value};
use javy_plugin_api::javy::{Config, Runtime};
use std::cell::OnceCell;

import_namespace!("uatu_spec_provider_v1");

#[link(wasm_import_module = "uatu_host")]
unsafe extern "C" {
    /// Runs selector query `kind` (0 find, 1 findAll, 2 clickable, 3 scrollable) for the
    /// selector in `ptr..ptr+len`; returns the length of the JSON answer, kept by the host.
    fn query(kind: u32, ptr: *const u8, len: usize) -> u32;
    /// Copies the answer of the last `query` to `dst`.
    fn take(dst: *mut u8);
    /// The runtime enters step phase `phase` (state, extractors, predicates, generators,
    /// result): the host times each phase with its own clock (the spec sees none).
    fn mark(phase: u32);
}

static mut RUNTIME: OnceCell<Runtime> = OnceCell::new();
static mut INPUT: Vec<u8> = Vec::new();
static mut OUTPUT: Vec<u8> = Vec::new();
static mut RETURN_AREA: [u32; 3] = [0; 3];
/// What the spec runtime is running (set by `__uatuDoing`), so that the host can
/// say which extractor, predicate or generator overran after a trap.
static mut DOING: i32 = 0;

const STATUS_OK: u32 = 0;
const STATUS_JS_ERROR: u32 = 1;
const STATUS_PROVIDER_ERROR: u32 = 2;

/// The name QuickJS gives the bundle in stack traces; the host maps it through the source map.
const SCRIPT_NAME: &str = "spec.js";

fn runtime() -> Result<&'static Runtime, String> {
    unsafe {
        if RUNTIME.get().is_none() {
            let mut config = Config::default();
            config.json(true);
            // javy never collects cycles by default (threshold usize::MAX); a long run would
            // then grow until the memory cap.
            config.gc_threshold(16 << 20);
            let runtime = Runtime::new(config).map_err(|e| format!("creating QuickJS runtime: {e}"))?;
            runtime
                .context()
                .with(install_host_functions)
                .map_err(|e| e.to_string())?;
            let _ = RUNTIME.set(runtime);
        }
        RUNTIME
            .get()
            .ok_or_else(|| "QuickJS runtime unavailable".to_string())
    }
}

fn install_host_functions(ctx: Ctx<'_>) -> quickjs::Result<()> {
    let query_fn = Function::new(ctx.clone(), |kind: u32, selector: String| -> String {
        let len = unsafe { query(kind, selector.as_ptr(), selector.len()) } as usize;
        let mut answer = vec![0u8; len];
        unsafe { take(answer.as_mut_ptr()) };
        String::from_utf8(answer).unwrap_or_else(|_| "[]".to_string())
    })?;
    ctx.globals().set("__uatuQuery", query_fn)?;
    let doing_fn = Function::new(ctx.clone(), |code: i32| unsafe { DOING = code })?;
    ctx.globals().set("__uatuDoing", doing_fn)?;
    let mark_fn = Function::new(ctx.clone(), |phase: u32| unsafe { mark(phase) })?;
    ctx.globals().set("__uatuMark", mark_fn)?;
    Ok(())
}

fn finish(status: u32, output: Vec<u8>) -> *const u32 {
    unsafe {
        OUTPUT = output;
        RETURN_AREA = [status, OUTPUT.as_ptr() as u32, OUTPUT.len() as u32];
        RETURN_AREA.as_ptr()
    }
}

/// The first `len` bytes the host wrote (mutable: the state's JSON parser works in place).
fn input(len: usize) -> &'static mut [u8] {
    unsafe { &mut INPUT[..len.min(INPUT.len())] }
}

/// The thrown value as `{"message", "stack"}` JSON.
fn exception_json(ctx: &Ctx<'_>) -> Vec<u8> {
    let thrown = ctx.catch();
    let (message, stack) = match thrown.as_object() {
        Some(object) if thrown.is_error() || object.contains_key("message").unwrap_or(false) => {
            let message: String = object
                .get::<_, Option<String>>("message")
                .ok()
                .flatten()
                .unwrap_or_default();
            let name: String = object
                .get::<_, Option<String>>("name")
                .ok()
                .flatten()
                .unwrap_or_default();
            let stack: String = object
                .get::<_, Option<String>>("stack")
                .ok()
                .flatten()
                .unwrap_or_default();
            let message = if name.is_empty() || name == "Error" {
                message
            } else {
                format!("{name}: {message}")
            };
            (message, stack)
        }
        _ => {
            let text = thrown
                .clone()
                .try_into_string()
                .ok()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_else(|| format!("a non-Error value was thrown ({})", thrown.type_name()));
            (text, String::new())
        }
    };
    let escape = |s: &str| {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    format!(
        "{{\"message\":{},\"stack\":{}}}",
        escape(&message),
        escape(&stack)
    )
    .into_bytes()
}

fn run_js<F>(body: F) -> *const u32
where
    F: for<'js> FnOnce(&Ctx<'js>) -> quickjs::Result<Vec<u8>>,
{
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(message) => return finish(STATUS_PROVIDER_ERROR, message.into_bytes()),
    };
    let (status, output) = runtime.context().with(|ctx| match body(&ctx) {
        Ok(output) => (STATUS_OK, output),
        Err(quickjs::Error::Exception) => (STATUS_JS_ERROR, exception_json(&ctx)),
        Err(error) => (STATUS_PROVIDER_ERROR, error.to_string().into_bytes()),
    });
    // Promise jobs are not part of the spec model; drop any a spec scheduled.
    finish(status, output)
}

/// The last code passed to `__uatuDoing` (see the spec runtime's `step`).
#[unsafe(export_name = "uatu_doing")]
pub extern "C" fn uatu_doing() -> i32 {
    unsafe { DOING }
}

/// Makes room for `len` input bytes and returns where the host must write them.
#[unsafe(export_name = "uatu_input")]
pub extern "C" fn uatu_input(len: usize) -> *mut u8 {
    unsafe {
        INPUT.clear();
        INPUT.resize(len, 0);
        INPUT.as_mut_ptr()
    }
}

#[unsafe(export_name = "uatu_compile")]
pub extern "C" fn uatu_compile(len: usize) -> *const u32 {
    let source = String::from_utf8_lossy(input(len)).into_owned();
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(message) => return finish(STATUS_PROVIDER_ERROR, message.into_bytes()),
    };
    let result = runtime
        .context()
        .with(|ctx| match Module::declare(ctx.clone(), SCRIPT_NAME, source) {
            Ok(module) => module
                .write(quickjs::module::WriteOptions::default())
                .map(|bytes| (STATUS_OK, bytes))
                .map_err(|e| e.to_string()),
            Err(quickjs::Error::Exception) => Ok((STATUS_JS_ERROR, exception_json(&ctx))),
            Err(error) => Err(error.to_string()),
        });
    match result {
        Ok((status, bytes)) => finish(status, bytes),
        Err(message) => finish(STATUS_PROVIDER_ERROR, message.into_bytes()),
    }
}

/// Evaluates the spec's bytecode (the input) and returns its description. The
/// seed's halves come as arguments; the runtime seeds `Math.random` with them.
#[unsafe(export_name = "uatu_load")]
pub extern "C" fn uatu_load(len: usize, seed_hi: u32, seed_lo: u32) -> *const u32 {
    let bytecode = input(len).to_vec();
    run_js(move |ctx| {
        let module = unsafe { Module::load(ctx.clone(), &bytecode)? };
        let (module, promise) = module.eval()?;
        if let Some(promise) = promise.into_value().as_promise() {
            if let Some(result) = promise.result::<Value>() {
                result?;
            }
        }
        let namespace: Object = module.namespace()?;
        let runtime: Object = match ctx.globals().get::<_, Option<Object>>("__uatu")? {
            Some(runtime) => runtime,
            None => {
                return Ok(br#"{"error":"the spec does not import @uatu/spec"}"#.to_vec());
            }
        };
        let load: Function = runtime.get("load")?;
        let description: String = load.call((namespace, seed_hi, seed_lo))?;
        Ok(description.into_bytes())
    })
}

/// The state JSON in the input as a JavaScript value. Transcoded from the bytes
/// (javy's serde bridge), not through a JavaScript string and `JSON.parse`: the
/// state crosses at every step.
fn input_value<'js>(ctx: &Ctx<'js>, len: usize) -> quickjs::Result<Value<'js>> {
    javy_plugin_api::javy::json::parse(ctx.clone(), input(len))
        .map_err(|e| quickjs::Error::new_from_js_message("state", "value", format!("the state is not JSON: {e}")))
}

/// `value` as JSON bytes, transcoded without building a JavaScript string (it
/// follows `JSON.stringify`: `toJSON`, skipped functions and `undefined`, cycles
/// refused); `undefined` is no output. A JavaScript error raised meanwhile (a
/// throwing `toJSON`, a cycle) is reported as the spec's.
fn output_json(ctx: &Ctx<'_>, value: Value<'_>) -> quickjs::Result<Vec<u8>> {
    if value.is_undefined() {
        return Ok(Vec::new());
    }
    javy_plugin_api::javy::json::stringify(value).map_err(|e| {
        if ctx.has_exception() {
            quickjs::Error::Exception
        } else {
            quickjs::Error::new_from_js_message("value", "JSON", e.to_string())
        }
    })
}

/// [`output_json`] of what the runtime's `step` or `generate` returned; when it cannot
/// be written (a cyclic value, a BigInt), the runtime's `unwritable` throws an error
/// naming the extractor or generator whose value it is, else the writer's error stands.
fn results_json<'js>(ctx: &Ctx<'js>, runtime: &Object<'js>, result: Value<'js>) -> quickjs::Result<Vec<u8>> {
    match output_json(ctx, result.clone()) {
        Err(quickjs::Error::Exception) => {
            let thrown = ctx.catch();
            let unwritable: Function = runtime.get("unwritable")?;
            unwritable.call::<_, ()>((result, thrown.clone()))?;
            Err(ctx.throw(thrown))
        }
        written => written,
    }
}

/// One spec step over the state JSON in the input.
#[unsafe(export_name = "uatu_step")]
pub extern "C" fn uatu_step(len: usize) -> *const u32 {
    run_js(move |ctx| {
        let state = input_value(ctx, len)?;
        let runtime: Object = ctx.globals().get("__uatu")?;
        let step: Function = runtime.get("step")?;
        let result: Value = step.call((state,))?;
        results_json(ctx, &runtime, result)
    })
}

/// The candidates of the action tree under place `place` (as numbered at load),
/// over the state of the last step: the host asks for the branches it draws.
#[unsafe(export_name = "uatu_generate")]
pub extern "C" fn uatu_generate(place: u32) -> *const u32 {
    run_js(move |ctx| {
        let runtime: Object = ctx.globals().get("__uatu")?;
        let generate: Function = runtime.get("generate")?;
        let result: Value = generate.call((place,))?;
        results_json(ctx, &runtime, result)
    })
}
