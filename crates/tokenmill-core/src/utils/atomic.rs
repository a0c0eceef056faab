//! Atomic saves: every file tokenmill writes goes through [`write_atomic_with`].
//!
//! The contents go to a fresh temporary file in the destination's folder (so the rename stays on
//! one file system), are flushed to disk, and the temporary file is renamed over the destination
//! only when complete: readers see the old file or the new one, never half of one. On any error
//! the temporary file is removed and the error names the destination, not the temporary file.
//!
//! Symbolic links: a destination that is a symbolic link is resolved first (through any chain of
//! links, a dangling one included), and the file it points to is replaced, in that file's folder:
//! the link stays a link, as when `open(2)` writes through it.
//!
//! Read-only folders: when the temporary file cannot be created because the folder is not
//! writable (`EACCES`, `EPERM`, `EROFS`) but the destination exists and can be opened for
//! writing, the destination is overwritten in place (truncated, written, flushed to disk), as a
//! plain `open(path, "w")` would. **Such a save is not atomic**: a save killed or failing half-way
//! leaves a truncated file.
//!
//! Killed saves: the temporary file of a save is named `.{NAME}.tokenmill-tmp-{12 letters or
//! digits}` (the Python helper `tokenmill._atomic` uses the same scheme), and the save holds an
//! exclusive lock (`flock(2)`; `LockFileEx` on Windows) on it until the rename. A process that
//! dies loses its locks, so a temporary file whose lock can be taken belongs to a save that will
//! never finish. Every save first removes such leftovers of the same destination, in its folder:
//! those whose name follows the scheme for that destination, that are regular files, and whose
//! lock it can take (the file is unlinked while the lock is held). A live save, of this process
//! or another, holds its lock and is never touched; where the file system does not support locks
//! (the attempt fails otherwise than "held"), nothing is removed. A save whose fresh temporary
//! file is removed in the instant between its creation and its locking notices it (the file has
//! no name left) and starts over with a new one. No age rule is needed: an mtime threshold would
//! either leave the leftovers of processes killed after this one started, or touch a save that
//! is only slow.
//!
//! Permissions: the saved file gets the mode a plain `open(path, O_CREAT, 0o666)` would give it,
//! i.e. `0o666 & !umask` (0644 under the usual umask 022). The temporary file is *created* with
//! mode 0o666 and the kernel applies the umask (and any default ACL of the folder) at creation.
//! That is the only race-free way: reading the umask needs `umask(2)`, which also sets it, for the
//! whole process, so another thread creating a file between the two calls would get the wrong
//! mode; a chmod after creation would also override a default ACL. Creating with 0o666 is safe
//! here because the name is fresh and random (`O_EXCL`), in the destination's own folder, so no
//! one can read more than they could read of the saved file itself. A file overwritten in place
//! keeps its mode.
//!
//! Several files: each file is saved atomically on its own. A save of several files (a model's
//! `vocab.json` and `merges.txt`, a SentencePiece `.model` and `.vocab`, `save_pretrained`'s
//! folder) killed between two files leaves the first ones new and the others old.
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// What follows `.{NAME}.` in the name of a temporary file (module docs).
pub const TEMPORARY_MARK: &str = "tokenmill-tmp-";
/// How many letters or digits end the name of a temporary file.
const RANDOM_CHARS: usize = 12;
/// Symbolic links followed before giving up, as Linux's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// Saves `path` atomically, with `write` producing the contents (see the module docs).
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let target = resolve_links(path).map_err(|e| Error::io(path, e))?;
    let folder = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    remove_stale_temporaries(folder, &name);
    let mut temp = match create_temporary(folder, &name) {
        Ok(temp) => temp,
        Err(e) if folder_not_writable(&e) => {
            let Some(mut file) = open_in_place(&target) else { return Err(Error::io(path, e)) };
            write(&mut file).map_err(|e| Error::io(path, e))?;
            return file.sync_all().map_err(|e| Error::io(path, e));
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    // `temp` removes the temporary file when dropped, i.e. on every early return below.
    write(temp.as_file_mut()).map_err(|e| Error::io(path, e))?;
    temp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    // The lock goes with the file, closed after the rename.
    temp.persist(&target).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Saves `contents` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(contents))
}

/// `path`, or the file it points to if it is a symbolic link (through chains of links; a
/// dangling link gives the path it points to).
pub fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(link), // `join` keeps an absolute `link` as is
                    None => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// The temporary file is missing because the folder is not writable (module docs).
fn folder_not_writable(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem)
}

/// The non-atomic fallback of a read-only folder: the existing regular file `target`, opened
/// for writing and truncated, if it can be.
fn open_in_place(target: &Path) -> Option<File> {
    if !std::fs::metadata(target).is_ok_and(|m| m.is_file()) {
        return None;
    }
    OpenOptions::new().write(true).truncate(true).open(target).ok()
}

/// A new, locked temporary file `.{name}.tokenmill-tmp-XXXXXXXXXXXX` in `folder`, created 0o666
/// less the umask (module docs). Created here rather than by `tempfile`, whose errors name the
/// temporary file; `tempfile` then removes it when dropped and renames it.
fn create_temporary(folder: &Path, name: &str) -> std::io::Result<tempfile::NamedTempFile> {
    use rand::Rng;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    // Created 0o666 and narrowed by the kernel with the umask (module docs). Windows has no
    // umask: the folder's ACL applies, as to any new file.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
    let mut attempts = 0;
    loop {
        let random: String = rand::thread_rng()
            .sample_iter(rand::distributions::Alphanumeric)
            .take(RANDOM_CHARS)
            .map(char::from)
            .collect();
        let path = folder.join(format!(".{name}.{TEMPORARY_MARK}{random}"));
        let file = match options.open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::AlreadyExists && attempts < 100 => {
                attempts += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let temp =
            tempfile::NamedTempFile::from_parts(file, tempfile::TempPath::try_from_path(path)?);
        match temp.as_file().try_lock() {
            // Removed by another save between its creation and now: its name is gone.
            Ok(()) if has_no_name(temp.as_file()) => continue,
            Ok(()) => return Ok(temp),
            // Taken by another save's cleanup in that instant: it removes the file.
            Err(std::fs::TryLockError::WouldBlock) => continue,
            // No locks on this file system: saved unlocked (leftovers are then never removed).
            Err(std::fs::TryLockError::Error(_)) => return Ok(temp),
        }
    }
}

#[cfg(unix)]
fn has_no_name(file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    file.metadata().is_ok_and(|m| m.nlink() == 0)
}

#[cfg(not(unix))]
fn has_no_name(_: &File) -> bool {
    false // an open file cannot lose its name there
}

/// Whether `file_name` is the name of a temporary file of a save of `name` (module docs).
pub fn is_temporary_of(file_name: &str, name: &str) -> bool {
    file_name
        .strip_prefix('.')
        .and_then(|rest| rest.strip_prefix(name))
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.strip_prefix(TEMPORARY_MARK))
        .is_some_and(|tail| {
            tail.len() == RANDOM_CHARS && tail.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// Removes the temporary files that killed saves of `folder/name` left (module docs); errors
/// are ignored: a leftover stays until a later save.
pub fn remove_stale_temporaries(folder: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        if !file_name.to_str().is_some_and(|f| is_temporary_of(f, name)) {
            continue;
        }
        // `file_type` does not follow links: a link by that name is left alone.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = File::open(&path) else { continue };
        if file.try_lock().is_ok() {
            let _ = std::fs::remove_file(&path);
        }
    }
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
        assert!(!err.to_string().contains(TEMPORARY_MARK), "{err}");
        assert!(err.to_string().contains("No such file"), "{err}");
    }

    #[test]
    fn leftovers_are_removed_and_live_saves_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let stale = dir.path().join(".out.txt.tokenmill-tmp-abcdefABC123");
        std::fs::write(&stale, b"killed").unwrap();
        let live = create_temporary(dir.path(), "out.txt").unwrap();
        let other = dir.path().join(".other.txt.tokenmill-tmp-abcdefABC123");
        std::fs::write(&other, b"another file's").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert!(!stale.exists());
        assert!(live.path().exists());
        assert!(other.exists());
        assert!(is_temporary_of(&live.path().file_name().unwrap().to_string_lossy(), "out.txt"));
        assert!(!is_temporary_of(".out.txt.tokenmill-tmp-abc", "out.txt"));
        assert!(!is_temporary_of(".out.txt.tokenmill-tmp-abcdefABC12-", "out.txt"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("real");
        std::fs::create_dir(&sub).unwrap();
        let target = sub.join("out.txt");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real/out.txt", &link).unwrap();
        let link2 = dir.path().join("link2.txt");
        std::os::unix::fs::symlink(&link, &link2).unwrap();
        write_atomic(&link2, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link2).unwrap().file_type().is_symlink());
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(names(&sub), ["out.txt"]);

        let dangling = dir.path().join("dangling.txt");
        std::os::unix::fs::symlink("real/new.txt", &dangling).unwrap();
        write_atomic(&dangling, b"x").unwrap();
        assert_eq!(std::fs::read(sub.join("new.txt")).unwrap(), b"x");

        let looping = dir.path().join("loop.txt");
        std::os::unix::fs::symlink("loop.txt", &looping).unwrap();
        let err = write_atomic(&looping, b"x").unwrap_err();
        assert!(matches!(&err, Error::Io { path: p, .. } if *p == looping), "{err}");
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
