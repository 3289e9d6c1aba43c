//! `screen-signature`: gives specs the host's abstraction of the current screen
//! (`ctx.screen_signature`: the hierarchy's structure, classes, resource ids and
//! content descriptions, never its text; runs of identical siblings count once;
//! defined once, in `host/src/plugin/context.rs`), so they can count distinct
//! screens. Values: `signature` (16 hex digits), `distinct_screens` (signatures
//! seen so far in the run), `blank_screen` (the screenshot is almost entirely one
//! colour; `null` without a screenshot).
//!
//! Config (`[plugins.screen-signature]`): `blank-detection` (default true; false
//! skips the screenshot and its decoding cost), `blank-threshold` (default 0.98,
//! the share of sampled pixels within `blank-tolerance` (default 8) of the most
//! common colour).

use std::collections::{HashMap, HashSet};

use uatu_plugin_sdk::extractor::*;
use uatu_plugin_sdk::serde_json::{Value, json};

struct ScreenSignature {
    blank_detection: bool,
    blank_threshold: f64,
    blank_tolerance: i32,
    seen: HashSet<String>,
}

fn is_blank(screenshot: &Screenshot, threshold: f64, tolerance: i32) -> bool {
    let pixels: Vec<[u8; 4]> = screenshot
        .rgba
        .chunks_exact(4)
        .step_by(7)
        .map(|p| [p[0], p[1], p[2], p[3]])
        .collect();
    if pixels.is_empty() {
        return true;
    }
    let mut counts: HashMap<[u8; 3], usize> = HashMap::new();
    for pixel in &pixels {
        // Quantised, so that noise does not split the dominant colour.
        *counts
            .entry([pixel[0] >> 4, pixel[1] >> 4, pixel[2] >> 4])
            .or_default() += 1;
    }
    let Some((&dominant, _)) = counts.iter().max_by_key(|(_, count)| **count) else {
        return true;
    };
    let centre = dominant.map(|c| i32::from(c) * 16 + 8);
    let close = pixels
        .iter()
        .filter(|p| (0..3).all(|i| (i32::from(p[i]) - centre[i]).abs() <= tolerance + 8))
        .count();
    close as f64 / pixels.len() as f64 >= threshold
}

impl Extractor for ScreenSignature {
    fn init(config: Config) -> Result<Self, String> {
        Ok(ScreenSignature {
            blank_detection: config.bool_or("blank-detection", true)?,
            blank_threshold: config.f64_or("blank-threshold", 0.98)?,
            blank_tolerance: config.f64_or("blank-tolerance", 8.0)? as i32,
            seen: HashSet::new(),
        })
    }

    fn needs_screenshot(&self) -> bool {
        self.blank_detection
    }

    fn extract(
        &mut self,
        ctx: &StepContext,
        screenshot: Option<&Screenshot>,
    ) -> Result<Vec<NamedValue>, String> {
        let signature = &ctx.screen_signature;
        if !self.seen.contains(signature) {
            self.seen.insert(signature.clone());
        }
        let blank = match screenshot {
            Some(screenshot) => json!(is_blank(screenshot, self.blank_threshold, self.blank_tolerance)),
            None => Value::Null,
        };
        Ok(vec![
            NamedValue::new("signature", json!(signature)),
            NamedValue::new("distinct_screens", json!(self.seen.len())),
            NamedValue::new("blank_screen", blank),
        ])
    }
}

uatu_plugin_sdk::export_extractor!(ScreenSignature);
