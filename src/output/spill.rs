//! A temporary folder that holds text a command will need again later, so that memory follows
//! the work in flight rather than the whole input (`session import` keeps each session's
//! scenario here between its replay and its calibrated replay). Removed when dropped, and by an
//! interruption (registered with the pending writes).

use std::path::{Path, PathBuf};

use super::write::write_err;
use crate::error::{Error, Result};
use crate::process::{forget, pending};

/// A folder of text files keyed by relative names, gone with the value.
#[derive(Debug)]
pub struct Spill {
    dir: PathBuf,
}

impl Spill {
    /// A new, empty spill folder inside `parent` (the output folder, so that texts are renamed
    /// into place on one file system), or the system's temporary folder.
    pub fn new(parent: Option<&Path>) -> Result<Spill> {
        let parent = parent.map_or_else(std::env::temp_dir, Path::to_path_buf);
        // Created and registered under the lock: an interruption in between would leave it.
        let mut list = pending();
        let dir = tempfile::Builder::new()
            .prefix(".toolbudget-spill-")
            .tempdir_in(&parent)
            .map_err(write_err(&parent))?
            .keep();
        list.push(dir.clone());
        Ok(Spill { dir })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// Stores `text` under `key` (a relative name; folders in it are made).
    pub fn put(&self, key: &str, text: &str) -> Result<()> {
        let path = self.path(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(write_err(parent))?;
        }
        std::fs::write(&path, text).map_err(write_err(&path))
    }

    /// The text stored under `key`.
    pub fn get(&self, key: &str) -> Result<String> {
        let path = self.path(key);
        // Written by this run a moment ago: failing to read it back is a failure to write.
        std::fs::read_to_string(&path).map_err(|e| Error::Write { path, source: e })
    }

    /// Removes what is stored under `key` (absent: nothing to do).
    pub fn remove(&self, key: &str) {
        let _ = std::fs::remove_file(self.path(key));
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        let mut list = pending();
        let _ = std::fs::remove_dir_all(&self.dir);
        forget(&mut list, &self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_come_back_and_the_folder_goes_with_the_value() {
        let parent = tempfile::tempdir().unwrap();
        let spill = Spill::new(Some(parent.path())).unwrap();
        spill.put("a/b.yaml", "one").unwrap();
        spill.put("c", "two").unwrap();
        assert_eq!(spill.get("a/b.yaml").unwrap(), "one");
        spill.remove("c");
        assert!(spill.get("c").is_err());
        let dir = spill.dir.clone();
        assert!(dir.starts_with(parent.path()) && dir.is_dir());
        drop(spill);
        assert!(!dir.exists());
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }
}
