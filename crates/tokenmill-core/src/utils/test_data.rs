//! Where the tests find the shared data folder (corpora, pretrained files).
use std::path::PathBuf;

/// `$TOKENMILL_SHARED`, else `../shared` beside the repository (or beside the worktree
/// folder); `None` if that folder is absent (the test then skips, saying so).
pub fn shared_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("TOKENMILL_SHARED") {
        return Some(PathBuf::from(dir)).filter(|p| p.exists());
    }
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    [manifest.join("../../../shared"), manifest.join("../../../../shared")]
        .into_iter()
        .find(|p| p.exists())
}
