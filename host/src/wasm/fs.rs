//! The one way uatu replaces a file: write beside it, then rename, so a reader
//! sees the old file or the new one and never half of one.

use std::path::Path;

/// Writes `bytes` to `path` atomically, creating its directory. The temporary file
/// is named after the file and this process, and is removed when anything fails,
/// so nothing half-written is left behind (a full disk included).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{name}.{}.partial", std::process::id()));
    let written = std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("nested/doc.json");
        write_atomically(&path, b"one").expect("first write");
        write_atomically(&path, b"two").expect("second write");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        let names: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["doc.json"]);
    }

    #[test]
    fn a_failed_write_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The target is a directory: the rename fails after the temporary was written.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).expect("mkdir");
        std::fs::write(path.join("inside"), b"x").expect("fill");
        assert!(write_atomically(&path, b"data").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["taken"]);
    }
}
