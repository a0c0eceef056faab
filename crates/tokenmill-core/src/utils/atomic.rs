//! Atomic saves: every file tokenmill writes goes through [`write_atomic_with`].
//!
//! The contents go to a fresh temporary file in the destination's folder (so the rename stays on
//! one file system), are flushed to disk, and the temporary file is renamed over the destination
//! only when complete: readers see the old file or the new one, never half of one. On any error
//! the temporary file is removed and the error names the destination, not the temporary file.
//!
//! Permissions: the saved file gets the mode a plain `open(path, O_CREAT, 0o666)` would give it,
//! i.e. `0o666 & !umask` (0644 under the usual umask 022). The temporary file is *created* with
//! mode 0o666 and the kernel applies the umask (and any default ACL of the folder) at creation.
//! That is the only race-free way: reading the umask needs `umask(2)`, which also sets it, for the
//! whole process, so another thread creating a file between the two calls would get the wrong
//! mode; a chmod after creation would also override a default ACL. Creating with 0o666 is safe
//! here because the name is fresh and random (`O_EXCL`), in the destination's own folder, so no
//! one can read more than they could read of the saved file itself.
use std::fs::File;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Saves `path` atomically, with `write` producing the contents (see the module docs).
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Created 0o666 and narrowed by the kernel with the umask (module docs). Windows has no
    // umask: the folder's ACL applies, as to any new file.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temp = builder.tempfile_in(folder).map_err(|e| Error::io(path, e))?;
    // `temp` removes the temporary file when dropped, i.e. on every early return below.
    write(temp.as_file_mut()).map_err(|e| Error::io(path, e))?;
    temp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    temp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Saves `contents` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(contents))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(names(dir.path()), ["out.txt"]);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_names_the_destination() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomic(&path, b"old").unwrap();
        let err = write_atomic_with(&path, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(matches!(&err, Error::Io { path: p, .. } if *p == path), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["out.txt"]);

        let missing = dir.path().join("no-such-folder").join("out.txt");
        let err = write_atomic(&missing, b"x").unwrap_err();
        assert!(matches!(&err, Error::Io { path: p, .. } if *p == missing), "{err}");
    }

    /// The mode is `0o666 & !umask`. The umask is process-wide, so this test reads it without
    /// changing it (`/proc/self/status`, Linux) rather than setting it under the other tests;
    /// tests/test_save_modes.py saves under umasks 022 and 027 in subprocesses.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_mode_follows_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let Some(umask) = status.lines().find_map(|l| l.strip_prefix("Umask:")) else {
            return; // kernels before 4.7 do not report it
        };
        let umask = u32::from_str_radix(umask.trim(), 8).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomic(&path, b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask, "umask {umask:03o}");
    }
}
