//! The compiled guest, cached on disk so that a process starts without compiling.
//!
//! A cache entry is keyed by the engine's compatibility hash (wasmtime version, target, the
//! settings that change code generation) and a hash of the module's bytes. Entries are written
//! by this module only: to a temporary file created exclusively, then renamed into place, with
//! mode 0400 (read-only, even for its owner) in a directory of mode 0700. An entry is used only
//! if it is a regular file owned by the current user that nobody can write, in a directory
//! nobody else can write; anything else is ignored and the module is compiled in memory. Any
//! failure of the cache (unwritable directory, corrupt or stale entry) falls back to compiling
//! in memory.
//!
//! Processes that start together on a cold cache compile once: the first to miss takes an
//! exclusive advisory lock (`flock`) on `<entry>.lock` in the directory, looks for the entry
//! again, compiles and stores it, removes the lock file and lets go; the others wait for the
//! lock (at most 30 s, then they compile themselves) and map the entry it left.
//! The lock is taken only in a directory nobody else can write, and its file is opened without
//! following a link. It saves work and nothing else depends on it.
//!
//! Entries are mapped into memory, not read (a cold start then costs ~2 ms instead of ~9 ms).
//! A mapped file must not shrink while it is in use, which is why entries are read-only and
//! only ever replaced by a rename (the old inode stays intact for processes that map it).
//! Only a process of the same user that makes an entry writable and truncates it on purpose
//! could still break a running process, and such a process can do anything this one can.

use std::fs::{File, TryLockError};
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmtime::{Engine, Module};

/// Where compiled guest modules are cached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ModuleCache {
    /// `$FEXPR_MODULE_CACHE` when set (`off` for no cache, else a directory); otherwise
    /// `$XDG_CACHE_HOME/fexpr`, or `$HOME/.cache/fexpr` when `XDG_CACHE_HOME` is unset; no
    /// cache if none is set. The default.
    #[default]
    Default,
    /// This directory (created if missing, mode 0700).
    Dir(PathBuf),
    /// No disk cache: compile in memory every time a `Sandbox` is built.
    Off,
}

impl ModuleCache {
    /// The directory this setting names, if any.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            ModuleCache::Default => default_dir(),
            ModuleCache::Dir(dir) => Some(dir.clone()),
            ModuleCache::Off => None,
        }
    }
}

/// The environment variable that overrides [`ModuleCache::Default`]: `off`, or a directory.
pub const MODULE_CACHE_ENV: &str = "FEXPR_MODULE_CACHE";

fn default_dir() -> Option<PathBuf> {
    let nonempty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(setting) = nonempty(MODULE_CACHE_ENV) {
        return (setting != "off").then(|| PathBuf::from(setting));
    }
    if let Some(xdg) = nonempty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(xdg).join("fexpr"));
    }
    nonempty("HOME").map(|home| PathBuf::from(home).join(".cache").join("fexpr"))
}

/// How a module was obtained, for tests and diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleSource {
    /// Compiled in memory (cache off, unusable, or its entry missing); written to the cache
    /// if there is one.
    Compiled,
    /// Loaded from a cache entry.
    Cached,
}

/// The cache file name for `bytes` compiled by `engine`; `sha256` is the module's hash when it
/// is known already (the embedded guest's, see [`embedded_sha256`]), so that it need not be hashed.
fn entry_name(engine: &Engine, bytes: &[u8], sha256: Option<&str>) -> String {
    // A fast fixed-seed hash: the key only has to be stable between runs of one build (a
    // changed hash just misses the cache), and hashing the 2 MB guest with SipHash took a
    // noticeable part of a cold start.
    let hasher = foldhash::quality::FixedState::with_seed(0x0fe9_c0de);
    let module = match sha256 {
        Some(sha) => format!("s{sha}"),
        None => format!("{:016x}", hasher.hash_one(bytes)),
    };
    format!(
        "guest-{:016x}-{module}-{}.cwasm",
        hasher.hash_one(engine.precompile_compatibility_hash()),
        bytes.len()
    )
}

/// The embedded guest's sha256 as recorded in [`super::GUEST_WASM_INFO`]: with it a cold start
/// neither hashes nor even touches the 2 MB module when its compiled form is cached.
/// `scripts/build-guest.sh` writes the two together and CI (`scripts/check-guest.sh`) checks
/// that they match.
pub(crate) fn embedded_sha256() -> Option<&'static str> {
    super::GUEST_WASM_INFO
        .lines()
        .find_map(|line| line.strip_prefix("wasm-sha256: "))
        .map(str::trim)
        .filter(|sha| sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The compiled module for `bytes`, from the cache in `dir` when possible.
/// `sha256`: the module's hash if known (see [`entry_name`]).
pub(crate) fn load_or_compile(
    engine: &Engine,
    bytes: &[u8],
    sha256: Option<&str>,
    dir: Option<&Path>,
) -> wasmtime::Result<(Module, ModuleSource)> {
    let Some(dir) = dir else {
        return Ok((Module::new(engine, bytes)?, ModuleSource::Compiled));
    };
    let path = dir.join(entry_name(engine, bytes, sha256));
    if let Some(module) = load_entry(engine, dir, &path) {
        return Ok((module, ModuleSource::Cached));
    }
    // A miss: one process compiles while the others wait for its entry.
    let lock = CompileLock::take(dir, &path, COMPILE_WAIT);
    if lock.is_some() {
        if let Some(module) = load_entry(engine, dir, &path) {
            return Ok((module, ModuleSource::Cached));
        }
    }
    let module = Module::new(engine, bytes)?;
    // Best effort: a cache that cannot be written is no cache.
    let _ = store_entry(dir, &path, &module);
    drop(lock);
    Ok((module, ModuleSource::Compiled))
}

/// The module in the entry at `path`, if it is one this module wrote and wasmtime accepts it.
#[allow(unsafe_code)] // the unsafe block below carries its SAFETY comment
fn load_entry(engine: &Engine, dir: &Path, path: &Path) -> Option<Module> {
    if !trusted_entry(dir, path) {
        return None;
    }
    // Mapped, not read: see the module docs for why the mapping stays valid.
    // SAFETY: `trusted_entry` checked that the file is one this module wrote (see the module
    // docs); wasmtime checks its header and engine compatibility.
    unsafe { Module::deserialize_file(engine, path) }.ok()
}

/// How long a process that finds another one compiling the same module waits for its entry
/// before compiling the module itself. A compile takes about a second (a few on a loaded
/// machine); a process that holds the lock and dies releases it at once.
const COMPILE_WAIT: Duration = Duration::from_secs(30);

/// An exclusive advisory lock (`flock`) on `<entry>.lock` in the cache directory, held while
/// one process compiles and stores an entry, so that processes starting together on a cold
/// cache compile once. It only saves work: entries are still written atomically, so a process
/// that compiles without it (the lock could not be had, or `COMPILE_WAIT` passed) is correct,
/// only slower.
struct CompileLock {
    file: File,
    path: PathBuf,
}

impl CompileLock {
    /// The lock for `entry`, once no other process holds it; `None` when the directory is not
    /// one only we can write, the lock file cannot be opened, or after `wait`.
    fn take(dir: &Path, entry: &Path, wait: Duration) -> Option<CompileLock> {
        create_private_dir(dir).ok()?;
        if !trusted_dir(dir) {
            return None;
        }
        let path = entry.with_extension("lock");
        let file = lock_file_options().open(&path).ok()?;
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Some(CompileLock { file, path }),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(_) => return None,
            }
        }
    }
}

impl Drop for CompileLock {
    /// The entry is stored (or could not be): remove the lock file, then let go. A process
    /// still waiting on the removed file, or one that makes a new lock file, finds the entry
    /// when it gets its lock; at worst a race costs one more compile.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Writes `module` to `path` atomically: a fresh temporary file, then a rename.
fn store_entry(dir: &Path, path: &Path, module: &Module) -> std::io::Result<()> {
    let serialized = module
        .serialize()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    create_private_dir(dir)?;
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".tmp-{}-{nonce}", std::process::id()));
    let result = (|| {
        use std::io::Write;
        let mut file = private_file_options().open(&tmp)?;
        file.write_all(&serialized)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// The lock file: opened for writing (created if missing, never truncated), not through a
/// symbolic link.
fn lock_file_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options
}

fn private_file_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o400);
    options
}

/// Whether `meta` is owned by the current user and has none of the `unwritable` mode bits.
#[cfg(unix)]
#[allow(unsafe_code)] // the unsafe block below carries its SAFETY comment
fn mine(meta: &std::fs::Metadata, unwritable: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    meta.uid() == me && meta.mode() & unwritable == 0
}

/// Whether `dir` is a directory (not a link) of ours that nobody else can write.
#[cfg(unix)]
fn trusted_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir() && mine(&meta, 0o022))
}

/// Whether `path` in `dir` is an entry this module wrote: see the module docs.
#[cfg(unix)]
fn trusted_entry(dir: &Path, path: &Path) -> bool {
    trusted_dir(dir)
        && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file() && mine(&meta, 0o222))
}

/// Without Unix ownership and modes to check, any directory will do for the lock.
#[cfg(not(unix))]
fn trusted_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
}

/// Whether `path` in `dir` is an entry this module wrote. Without Unix ownership and modes to
/// check, the cache is read only if it is a regular file (not a link).
#[cfg(not(unix))]
fn trusted_entry(_dir: &Path, path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_guest_has_a_recorded_sha256() {
        let sha = embedded_sha256().expect("guest/fexpr-guest.wasm.info names the sha256");
        assert_eq!(sha.len(), 64);
    }
}
