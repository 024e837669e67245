//! The profile folder: which browser wrote it, and its databases read as a consistent copy
//! while the browser holds them open. Only these files are ever opened: Chromium's `History`
//! (with its `-wal` and `-journal`) and `Bookmarks`, Firefox's `places.sqlite` (with its
//! `-wal`); the others (cookies, saved passwords, form data) are not even looked at by name.

use std::io::ErrorKind;

use quarry_sdk::Error;
use quarry_sdk::fs::Dir;
use quarry_sqlite::Database;

/// The largest database read, in bytes.
const MAX_DATABASE: u64 = 512 << 20;
/// Times a read is tried again when the browser was writing meanwhile.
const TRIES: usize = 10;

/// Which browser a profile is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browser {
    /// Chromium, Chrome, Edge, Brave, Vivaldi, Opera: `History` and `Bookmarks`.
    Chromium,
    /// Firefox (and its forks): `places.sqlite`.
    Firefox,
}

/// A profile folder the user granted.
pub struct Profile {
    dir: Dir,
    path: String,
    /// Which browser wrote it.
    pub browser: Browser,
}

impl Profile {
    /// The profile at `path` (a granted folder).
    pub fn open(path: &str) -> Result<Profile, Error> {
        let dir = Dir::open(path).map_err(|e| io_error(path, &e))?;
        let browser = if dir.stat("History").is_ok() {
            Browser::Chromium
        } else if dir.stat("places.sqlite").is_ok() {
            Browser::Firefox
        } else {
            return Err(Error::InvalidConfig(format!(
                "`profile` {path}: neither a Chromium profile (with a History file) nor a Firefox one (with places.sqlite); give the profile folder itself, such as ~/.config/chromium/Default"
            )));
        };
        Ok(Profile {
            dir,
            path: path.to_owned(),
            browser,
        })
    }

    /// The history database (`History` or `places.sqlite`), as the browser last committed it.
    pub fn history(&self) -> Result<Database, Error> {
        let name = match self.browser {
            Browser::Chromium => "History",
            Browser::Firefox => "places.sqlite",
        };
        for _ in 0..TRIES {
            if let Some(database) = self.consistent(name)? {
                return Ok(database);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        Err(Error::Unavailable(format!(
            "{}/{name}: the browser kept writing it; Quarry tries again at the next sync",
            self.path
        )))
    }

    /// Chromium's bookmarks file (JSON), if the profile has one.
    pub fn bookmarks_json(&self) -> Result<Option<Vec<u8>>, Error> {
        self.read("Bookmarks")
    }

    /// `name` and its log read so that they agree: the log, the file, then the log's header
    /// again; none when the browser changed them meanwhile (a checkpoint) or is in the middle
    /// of a write with a rollback journal.
    fn consistent(&self, name: &str) -> Result<Option<Database>, Error> {
        let wal_name = format!("{name}-wal");
        if let Some(journal) = self.read(&format!("{name}-journal"))?
            && journal.len() >= 28
            && journal[..8] == [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
        {
            // A hot rollback journal: a write is under way.
            return Ok(None);
        }
        let wal = self.read(&wal_name)?;
        let Some(main) = self.read(name)? else {
            return Err(Error::NotFound(format!("{}/{name} is gone", self.path)));
        };
        let again = self.read_head(&wal_name, 32)?;
        let head = |bytes: &Option<Vec<u8>>| bytes.as_ref().map(|b| b[..b.len().min(32)].to_vec());
        if head(&wal) != again {
            return Ok(None);
        }
        Database::open(main, wal.as_deref())
            .map(Some)
            .map_err(|e| Error::Other(format!("{}/{name}: {e}", self.path)))
    }

    /// The whole of file `name` of the profile, or none when it does not exist.
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, Error> {
        let file = match self.dir.open_file(name) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&format!("{}/{name}", self.path), &e)),
        };
        let io = |e: std::io::Error| io_error(&format!("{}/{name}", self.path), &e);
        let size = file.stat().map_err(io)?.size;
        if size > MAX_DATABASE {
            return Err(Error::Other(format!(
                "{}/{name}: {size} bytes, more than the {} MiB read",
                self.path,
                MAX_DATABASE >> 20
            )));
        }
        file.read_at(0, size).map(Some).map_err(io)
    }

    /// The first `bytes` of file `name`, or none when it does not exist.
    fn read_head(&self, name: &str, bytes: u32) -> Result<Option<Vec<u8>>, Error> {
        match self.dir.read_start(name, bytes) {
            Ok((head, _)) => Ok(Some(head)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(&format!("{}/{name}", self.path), &e)),
        }
    }
}

fn io_error(path: &str, e: &std::io::Error) -> Error {
    match e.kind() {
        ErrorKind::NotFound => Error::NotFound(format!("{path}: {e}")),
        _ => Error::Unavailable(format!("{path}: {e}")),
    }
}
