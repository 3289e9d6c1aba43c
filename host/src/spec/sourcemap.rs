//! Source maps (version 3) from the bundler, to turn `spec.js:line:col` positions in
//! QuickJS stacks into `spec.ts:line:col`.

use serde::Deserialize;

/// One mapped position: 0-based generated line/column to a source position.
#[derive(Debug, Clone, Copy)]
struct Segment {
    generated_column: u32,
    source: u32,
    line: u32,
    column: u32,
}

/// A decoded source map.
#[derive(Debug, Default)]
pub struct SourceMap {
    sources: Vec<String>,
    /// Per generated line, its segments ordered by generated column.
    lines: Vec<Vec<Segment>>,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    mappings: String,
}

/// A source map that is not JSON of the expected shape, or whose mappings do not decode.
#[derive(Debug, thiserror::Error)]
#[error("invalid source map: {0}")]
pub struct SourceMapError(String);

impl SourceMap {
    /// Reads a source map (version 3 JSON) and decodes its mappings.
    pub fn parse(json: &str) -> Result<SourceMap, SourceMapError> {
        let raw: Raw = serde_json::from_str(json).map_err(|e| SourceMapError(e.to_string()))?;
        let mut lines = Vec::new();
        let (mut source, mut line, mut column) = (0i64, 0i64, 0i64);
        for text in raw.mappings.split(';') {
            let mut segments = Vec::new();
            let mut generated_column = 0i64;
            for field in text.split(',').filter(|f| !f.is_empty()) {
                let values = decode_vlq(field)?;
                generated_column += values[0];
                if values.len() >= 4 {
                    source += values[1];
                    line += values[2];
                    column += values[3];
                    segments.push(Segment {
                        generated_column: generated_column.max(0) as u32,
                        source: source.max(0) as u32,
                        line: line.max(0) as u32,
                        column: column.max(0) as u32,
                    });
                }
            }
            lines.push(segments);
        }
        Ok(SourceMap {
            sources: raw.sources,
            lines,
        })
    }

    /// The names of the original sources, as stored.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// Maps a 1-based generated `line:col` to a 1-based `(source, line, col)`.
    pub fn lookup(&self, line: u32, column: u32) -> Option<(&str, u32, u32)> {
        let segments = self.lines.get(line.checked_sub(1)? as usize)?;
        let column = column.saturating_sub(1);
        let index = segments.partition_point(|s| s.generated_column <= column);
        let segment = segments.get(index.checked_sub(1)?).or_else(|| segments.first())?;
        let source = self.sources.get(segment.source as usize)?;
        Some((source, segment.line + 1, segment.column + 1))
    }

    /// Rewrites every `<script>:line:col` in `text` (a stack trace) to its source position.
    pub fn map_text(&self, text: &str, script: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let needle = format!("{script}:");
        while let Some(at) = rest.find(&needle) {
            out.push_str(&rest[..at]);
            let after = &rest[at + needle.len()..];
            match parse_line_col(after) {
                Some((line, column, used)) => {
                    match self.lookup(line, column) {
                        Some((source, l, c)) => out.push_str(&format!("{source}:{l}:{c}")),
                        None => out.push_str(&format!("{script}:{line}:{column}")),
                    }
                    rest = &after[used..];
                }
                None => {
                    out.push_str(&needle);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// `12:5` or `12` at the start of `text`: (line, column, bytes used). A missing column is 1.
fn parse_line_col(text: &str) -> Option<(u32, u32, usize)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let line: u32 = text.get(..digits)?.parse().ok()?;
    let rest = &text[digits..];
    if let Some(after) = rest.strip_prefix(':') {
        let column_digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if let Ok(column) = after[..column_digits].parse::<u32>() {
            return Some((line, column, digits + 1 + column_digits));
        }
    }
    Some((line, 1, digits))
}

fn decode_vlq(field: &str) -> Result<Vec<i64>, SourceMapError> {
    let mut values = Vec::new();
    let (mut value, mut shift) = (0i64, 0u32);
    for byte in field.bytes() {
        let digit = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => {
                return Err(SourceMapError(format!(
                    "bad character {:?} in mappings",
                    byte as char
                )));
            }
        } as i64;
        if shift > 60 {
            return Err(SourceMapError("VLQ value too large".into()));
        }
        value |= (digit & 31) << shift;
        if digit & 32 != 0 {
            shift += 5;
        } else {
            values.push(if value & 1 == 1 { -(value >> 1) } else { value >> 1 });
            value = 0;
            shift = 0;
        }
    }
    if values.is_empty() {
        return Err(SourceMapError(format!("empty segment {field:?}")));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_vlq() {
        assert_eq!(decode_vlq("AAgBC").unwrap(), vec![0, 0, 16, 1]);
        assert_eq!(decode_vlq("D").unwrap(), vec![-1]);
    }

    #[test]
    fn maps_stack_positions() {
        // line 1: col 0 -> a.ts 1:0; line 2: col 2 -> a.ts 3:4
        let map = SourceMap::parse(r#"{"sources":["a.ts"],"mappings":"AAAA;EAEI"}"#).unwrap();
        assert_eq!(map.lookup(2, 3), Some(("a.ts", 3, 5)));
        assert_eq!(
            map.map_text("at f (spec.js:2:3)\n", "spec.js"),
            "at f (a.ts:3:5)\n"
        );
    }
}
