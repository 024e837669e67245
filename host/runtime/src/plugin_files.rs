//! Reading a plugin's files from a folder the user names (`quarry plugin install`, `plugin
//! check`, the plugin folders at start) within the bounds of an upload through the settings
//! page: regular files only, opened without waiting (a FIFO never blocks), and never more than
//! their cap (a link to `/dev/zero` never fills memory).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The largest manifest read.
pub const MAX_MANIFEST_BYTES: u64 = 64 << 10;
/// The largest component read (as an upload's).
pub const MAX_COMPONENT_BYTES: u64 = 64 << 20;

/// The bytes of the regular file at `path`, at most `max`; an error for anything else (a FIFO, a
/// device, a folder) or anything larger, saying which.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a folder is never read)",
        ));
    }
    if meta.len() > max {
        return Err(too_large(max));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

/// The UTF-8 text of the regular file at `path`, at most `max` bytes.
pub fn read_bounded_text(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_bounded(path, max)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

fn too_large(max: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        format!("larger than {} KiB", max >> 10),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn devices_fifos_and_large_files_are_refused_in_bounded_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 2048]).expect("write");
        let small = dir.path().join("small");
        std::fs::write(&small, b"id = \"x\"").expect("write");
        let started = Instant::now();
        for refused in [&link, &fifo, &big, &dir.path().to_path_buf()] {
            assert!(
                read_bounded(refused, 1024).is_err(),
                "{}",
                refused.display()
            );
        }
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(read_bounded_text(&small, 1024).expect("read"), "id = \"x\"");
    }
}
