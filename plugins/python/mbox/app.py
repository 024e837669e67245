"""Quarry connector for mailboxes in mbox format, written in Python.

Lists every message of the `.mbox` files in the granted folder (and its subfolders), indexes
each message's subject, people, date and text body, and serves the raw message as the
original file. Built into a WebAssembly component with componentize-py; the host calls the
`Source` methods below through `quarry:connector@0.5.0`, with the Python SDK (`quarry_sdk`,
python/sdk) answering the calls this connector leaves to it.

The folder is listed with one host call per folder (`walk`); a mailbox the host saw change is
read again alone (`list_changes`), and a message removed from a mailbox that is still there
leaves the index at the next full listing. A locator carries its message's digest, so a
mailbox rewritten since (compacted, say) never serves another message's bytes.
"""

import email
import email.contentmanager
import email.feedparser
import email.header
import email.headerregistry
import email.message
import email.parser
import email.policy
import email.utils
import hashlib
import html.parser
import os

from quarry_sdk import (Connector, batch, changed_files, changes, fail, log, progress,
                        read_range, settings, stable_id, walk)
from wit_world.imports import types

# Messages per listing batch: small enough to finish well within a call's time limit.
BATCH = 200
SUFFIXES = (".mbox", ".mbx")


def is_mailbox(name):
    return name.lower().endswith(SUFFIXES)


def mailboxes(root):
    """Relative paths of the mbox files under `root`, sorted, hidden ones left out."""
    return sorted(entry.rel for entry in walk(root, keep=is_mailbox))


def messages_from(path, start):
    """(offset, raw bytes) of each message of the mbox file at `path` from byte `start` (the
    start of a message) on, read as a stream: a message starts at a line beginning "From "."""
    with open(path, "rb") as f:
        f.seek(start)
        pos, begun, lines = start, None, []
        for line in f:
            if line.startswith(b"From "):
                if begun is not None:
                    yield begun, b"".join(lines)
                begun, lines = pos, []
            if begun is not None:
                lines.append(line)
            pos += len(line)
        if begun is not None:
            yield begun, b"".join(lines)


def message_bytes(raw):
    """A message without its "From " separator line."""
    newline = raw.find(b"\n")
    return raw[newline + 1:] if raw.startswith(b"From ") and newline != -1 else raw


def parse(raw):
    return email.message_from_bytes(message_bytes(raw), policy=email.policy.default)


def date_ms(message):
    try:
        when = email.utils.parsedate_to_datetime(header(message, "date"))
        return int(when.timestamp() * 1000)
    except (TypeError, ValueError, IndexError, OverflowError):
        return 0


def header(message, name):
    """A header as text, encoded words (=?utf-8?...?=) decoded."""
    value = message.get(name)
    if value is None:
        return ""
    try:
        return str(email.header.make_header(email.header.decode_header(str(value)))).strip()
    except (LookupError, ValueError, UnicodeError):
        return str(value).strip()


def meta(rel, offset, raw):
    length = len(raw)
    # Headers only, with the plain compat32 policy: listing stays cheap.
    message = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(
        message_bytes(raw))
    message_id = header(message, "message-id")
    key = message_id or f"{rel}:{offset}"
    subject = header(message, "subject") or "(no subject)"
    digest = hashlib.sha256(raw).hexdigest()[:32]
    return types.DocMeta(
        id=stable_id("m", key),
        locator=f"{offset}:{length}:{digest}:{rel}",
        title=subject,
        path=rel,
        url=None,
        mime_type="message/rfc822",
        size_bytes=length,
        update_time_ms=date_ms(message),
        version=digest,
        has_text=True,
    )


class _Text(html.parser.HTMLParser):
    """The text of an HTML body, scripts and styles left out."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in ("p", "br", "div", "li", "tr", "h1", "h2", "h3"):
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def body_text(message):
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):
        content = part.get_payload(decode=True).decode("utf-8", "replace")
    if part.get_content_subtype() == "html":
        reader = _Text()
        reader.feed(content)
        content = "".join(reader.parts)
    return content.strip()


def read(root, locator):
    """The raw bytes a locator names (`offset:length:digest:path`), or a not-found error when
    the mailbox no longer holds that message there."""
    try:
        offset, length, digest, rel = locator.split(":", 3)
        offset, length = int(offset), int(length)
    except ValueError:
        fail("not-found", f"not a message locator: {locator!r}")
    path = os.path.normpath(os.path.join(root, rel))
    if not path.startswith(root.rstrip("/") + "/"):
        fail("not-found", f"outside the folder: {rel!r}")
    raw, _ = read_range(path, offset, length)
    if hashlib.sha256(raw).hexdigest()[:32] != digest:
        fail("not-found", f"{rel} changed; the next sync lists it again")
    return raw


# componentize-py snapshots the modules imported while it builds the component; a module the
# standard library imports lazily, at call time, would be missing then. Parsing one message here
# imports everything parsing and reading messages needs.
body_text(email.message_from_bytes(b"Subject: warm-up\n\nwarm-up\n", policy=email.policy.default))


class Source(Connector):
    def list_docs(self, checkpoint):
        # The checkpoint is where the next batch starts: "<byte offset>:<mailbox path>".
        root = settings()["folder"]
        files = mailboxes(root)
        at_offset, at_file = 0, files[0] if files else ""
        if checkpoint:
            offset, _, rel = checkpoint.partition(":")
            at_offset, at_file = int(offset), rel
        upserts = []
        for n, rel in enumerate(files):
            if rel < at_file:
                continue
            progress(f"reading {rel}", n, len(files))
            start = at_offset if rel == at_file else 0
            try:
                for offset, raw in messages_from(os.path.join(root, rel), start):
                    if len(upserts) == BATCH:
                        return batch(upserts, checkpoint=f"{offset}:{rel}", more=True)
                    upserts.append(meta(rel, offset, raw))
            except OSError as e:
                log(f"cannot read {rel}: {e}", types.LogLevel.WARN)
        return batch(upserts)

    def list_changes(self, paths):
        # A mailbox the host saw change is read again alone; one that is gone (or a folder,
        # or a mailbox too large for one answer) needs a full listing to find what left.
        changed = changed_files(paths, settings()["folder"])
        if changed is None:
            return None
        upserts = []
        for rel, entry in changed:
            if not is_mailbox(rel):
                continue
            if entry is None:
                return None
            try:
                for offset, raw in messages_from(entry.path, 0):
                    if len(upserts) == BATCH:
                        return None
                    upserts.append(meta(rel, offset, raw))
            except OSError:
                return None
        return changes(upserts, [])

    def fetch_content(self, doc):
        message = parse(read(settings()["folder"], doc.locator))
        people = [(k, str(message.get(k, ""))) for k in ("from", "to", "cc", "date")]
        people = [(k, v) for k, v in people if v]
        header = "\n".join(f"{k.capitalize()}: {v}" for k, v in people)
        subject = str(message.get("subject", "")).strip()
        text = f"{subject}\n{header}\n\n{body_text(message)}"
        return types.Content(text=text, page_starts=[], metadata=people)

    def read_file(self, doc, offset, max_bytes):
        raw = message_bytes(read(settings()["folder"], doc.locator))
        return types.FileChunk(data=raw[offset:offset + max_bytes], total_size=len(raw))

    def validate_config(self, config):
        root = dict(config).get("folder", "")
        if not os.path.isdir(root):
            fail("invalid-config", "folder: not a folder Quarry can read")
