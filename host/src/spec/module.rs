//! The spec module file that `uatu build` writes: a valid (empty) Wasm module
//! whose custom sections hold the spec-ABI version, the hash of the provider it
//! was compiled with, the QuickJS bytecode and the source map. The host links
//! it with exactly the provider it embeds, and refuses any other.

use std::path::Path;

/// The version of the host ↔ spec interface (provider entry points, the JSON
/// exchanged at load and step). Bump it whenever either changes.
pub const SPEC_ABI: u32 = 4;

const MAGIC: &[u8; 8] = b"\0asm\x01\0\0\0";
const SECTION_ABI: &str = "uatu.spec-abi";
const SECTION_PROVIDER: &str = "uatu.provider-sha256";
const SECTION_SOURCE: &str = "uatu.source";
const SECTION_BYTECODE: &str = "uatu.bytecode";
const SECTION_SOURCE_MAP: &str = "uatu.source-map";

/// A compiled spec, ready to instantiate.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecModule {
    /// The spec's file name as the user gave it (for messages).
    pub source: String,
    /// The spec ABI it was built for (must equal [`SPEC_ABI`] to run).
    pub abi: u32,
    /// Hex sha256 of the provider the bytecode was compiled with.
    pub provider_sha256: String,
    /// The spec compiled to QuickJS bytecode by that provider.
    pub bytecode: Vec<u8>,
    /// The bundle's source map (JSON), sources already named for display.
    pub source_map: String,
}

/// A `.wasm` spec module that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModuleError {
    /// The file is not a spec module `uatu build` wrote (not Wasm, a section missing or broken).
    #[error("{path}: not a uatu spec module: {reason}")]
    Malformed {
        /// The module file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The module was built by another uatu (another spec ABI or provider): rebuild it.
    #[error(
        "{path}: built for spec ABI {built_abi} with provider {built_provider}, but this uatu ({version}) has spec ABI \
         {SPEC_ABI} with provider {ours}; rebuild with: uatu build <spec>"
    )]
    Incompatible {
        /// The module file.
        path: String,
        /// The spec ABI it was built for.
        built_abi: u32,
        /// Hex sha256 of the provider it was built with.
        built_provider: String,
        /// Hex sha256 of this host's provider.
        ours: String,
        /// This host's version.
        version: &'static str,
    },
}

impl SpecModule {
    /// The module file's bytes: a Wasm header and one custom section per field.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        for (name, payload) in [
            (SECTION_ABI, self.abi.to_string().as_bytes().to_vec()),
            (SECTION_PROVIDER, self.provider_sha256.as_bytes().to_vec()),
            (SECTION_SOURCE, self.source.as_bytes().to_vec()),
            (SECTION_BYTECODE, self.bytecode.clone()),
            (SECTION_SOURCE_MAP, self.source_map.as_bytes().to_vec()),
        ] {
            let mut body = Vec::new();
            leb128(&mut body, name.len() as u64);
            body.extend_from_slice(name.as_bytes());
            body.extend_from_slice(&payload);
            out.push(0); // custom section
            leb128(&mut out, body.len() as u64);
            out.extend_from_slice(&body);
        }
        out
    }

    /// Parses a module file without checking compatibility.
    pub fn from_bytes(bytes: &[u8], path: &str) -> Result<SpecModule, ModuleError> {
        let malformed = |reason: &str| ModuleError::Malformed {
            path: path.to_string(),
            reason: reason.to_string(),
        };
        if bytes.get(..8) != Some(MAGIC.as_slice()) {
            return Err(malformed("no WebAssembly header"));
        }
        let mut at = 8;
        let mut sections: std::collections::HashMap<String, &[u8]> = Default::default();
        while at < bytes.len() {
            let id = bytes[at];
            at += 1;
            let size = read_leb128(bytes, &mut at).ok_or_else(|| malformed("truncated section"))? as usize;
            let end = at
                .checked_add(size)
                .filter(|end| *end <= bytes.len())
                .ok_or_else(|| malformed("truncated section"))?;
            if id == 0 {
                let mut name_at = at;
                let name_len =
                    read_leb128(bytes, &mut name_at).ok_or_else(|| malformed("bad section name"))? as usize;
                let name_end = name_at
                    .checked_add(name_len)
                    .filter(|e| *e <= end)
                    .ok_or_else(|| malformed("bad section name"))?;
                let name = String::from_utf8_lossy(&bytes[name_at..name_end]).into_owned();
                sections.insert(name, &bytes[name_end..end]);
            }
            at = end;
        }
        let text = |name: &str| -> Result<String, ModuleError> {
            let payload = sections
                .get(name)
                .ok_or_else(|| malformed(&format!("no `{name}` section")))?;
            String::from_utf8(payload.to_vec()).map_err(|_| malformed(&format!("`{name}` is not UTF-8")))
        };
        let abi = text(SECTION_ABI)?
            .trim()
            .parse()
            .map_err(|_| malformed("bad spec ABI version"))?;
        Ok(SpecModule {
            abi,
            provider_sha256: text(SECTION_PROVIDER)?,
            source: text(SECTION_SOURCE).unwrap_or_else(|_| path.to_string()),
            bytecode: sections
                .get(SECTION_BYTECODE)
                .map(|b| b.to_vec())
                .ok_or_else(|| malformed("no bytecode"))?,
            source_map: text(SECTION_SOURCE_MAP).unwrap_or_else(|_| "{}".to_string()),
        })
    }

    /// Refuses a module compiled for another ABI or provider.
    pub fn check_compatible(&self, path: &str) -> Result<(), ModuleError> {
        let ours = super::provider::sha256();
        if self.abi != SPEC_ABI || self.provider_sha256 != ours {
            return Err(ModuleError::Incompatible {
                path: path.to_string(),
                built_abi: self.abi,
                built_provider: short(&self.provider_sha256),
                ours: short(ours),
                version: crate::VERSION,
            });
        }
        Ok(())
    }

    /// Reads, parses and checks a `.wasm` spec module.
    pub fn read(path: &Path) -> Result<SpecModule, super::LoadError> {
        let bytes = std::fs::read(path).map_err(|source| super::LoadError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let shown = path.display().to_string();
        let module = SpecModule::from_bytes(&bytes, &shown)?;
        module.check_compatible(&shown)?;
        Ok(module)
    }
}

fn short(hash: &str) -> String {
    format!("sha256:{}", hash.get(..12).unwrap_or(hash))
}

fn leb128(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_leb128(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let (mut value, mut shift) = (0u64, 0u32);
    loop {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_is_valid_wasm_header() {
        let module = SpecModule {
            source: "spec.ts".into(),
            abi: SPEC_ABI,
            provider_sha256: "ab".repeat(32),
            bytecode: vec![1, 2, 3],
            source_map: "{}".into(),
        };
        let bytes = module.to_bytes();
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(SpecModule::from_bytes(&bytes, "x.wasm").unwrap(), module);
        assert!(SpecModule::from_bytes(&bytes[..bytes.len() - 1], "x.wasm").is_err());
    }
}
