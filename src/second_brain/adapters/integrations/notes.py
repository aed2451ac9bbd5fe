"""A folder of Markdown notes (an Obsidian vault, any notes folder): each note one mirror.

A note's mirror reads as its title (its first `# heading`, else its file name) and its body without the front
matter; the front matter's `tags` (a list, or `[a, b]`, or a comma-separated line) and the body's `#tags` are its
tags; `[[wikilinks]]` (`[[Note]]`, `[[Note|shown]]`, `[[Note#heading]]`) name the notes it links to, by file name
as Obsidian resolves them. Hidden folders (`.obsidian`, `.trash`, `.git`) are not notes.
"""

import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from ...domain import text
from ...domain.errors import InvalidInput, StoreUnavailable
from ...domain.integrations import ConnectForm, ConnectorSpec, Field
from ...ports.integrations import Item, Synced
from ...settings import Settings

WIKILINK = re.compile(r"\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
HASHTAG = re.compile(r"(?:^|\s)#([A-Za-z][\w/-]*)")
MAX_NOTE_BYTES = 1_000_000  # past this a file is no note (an export, a pasted log): left as it was
# A notes folder's walk is bounded: past these it is no notes folder (a home directory, a disk), and the sync stops
# with the bound in its last_error, changing nothing.
MAX_NOTES = 50_000
MAX_ENTRIES = 500_000  # files and folders looked at, notes or not
MAX_DEPTH = 32
# Folders that are the machine's, not anyone's notes: never a notes folder, nor anything inside them.
SYSTEM_FOLDERS = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/run", "/boot", "/etc", "/usr", "/bin", "/sbin",
                                         "/lib", "/lib32", "/lib64", "/var/lib", "/var/run", "/snap"))

SPEC = ConnectorSpec(
    kind="notes", title="Notes folder", source="notes",
    local=True,  # the folder is read with the server's rights: the owner's alone to name
    watched=True,  # a change in the folder is synced at once (adapters/integrations/watch.py)
    fields=(Field("path", "Folder (absolute path)", "the folder's absolute path (the owner only)", required=True,
                  pattern="^/", placeholder="/home/me/Vault"),),
    form=ConnectForm("Connect a notes folder", "Connect",
                     "A folder of Markdown notes on the machine the brain runs on (an Obsidian vault, say). Each note "
                     "becomes a memory that the folder owns: edit it there, and the next sync brings the change here.",
                     name="Notes", name_placeholder="My vault"))


class NotesFolder:
    spec = SPEC

    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir.resolve() if data_dir else None  # the brain's own files: never notes

    def check(self, settings: Mapping[str, str]) -> None:
        path = settings.get("path", "").strip()
        if not path:
            raise InvalidInput("A notes folder needs settings.path: the folder's absolute path")
        if not os.path.isabs(path):
            raise InvalidInput(f"settings.path must be an absolute path: {text.shorten(str(path))}")
        if not Path(path).is_dir() or Path(path).is_symlink():
            raise InvalidInput(f"No folder at settings.path: {text.shorten(str(path))} (a link to a folder is not "
                               "followed)")
        folder = Path(path).resolve()
        if folder == Path("/") or any(folder == s or s in folder.parents for s in SYSTEM_FOLDERS):
            raise InvalidInput("settings.path is the machine's own folder, not a notes folder: name the folder that "
                               "holds your notes")
        if self.data_dir and (folder == self.data_dir or folder in self.data_dir.parents
                              or self.data_dir in folder.parents):
            raise InvalidInput("settings.path holds the brain's own data folder: name the folder that holds your notes")

    def items(self, settings: Mapping[str, str], synced: Synced) -> Iterator[Item]:
        root = Path(settings.get("path", "").strip())
        try:
            notes = sorted(_notes(root))
        except OSError as e:  # unmounted, moved, or a folder inside it refused: nothing is known to be gone
            raise StoreUnavailable(f"The notes folder {root} cannot be read ({e.strerror or e}): moved, unmounted "
                                   "or not readable?") from e
        by_name: dict[str, str] = {}
        for path in sorted(notes, key=lambda p: (len(p.parts), p)):  # Obsidian: the shortest path wins a name
            by_name.setdefault(path.stem.lower(), _id(path.relative_to(root)))
        for path in notes:
            raw = _read(path)
            if raw is None:
                yield Item(_id(path.relative_to(root)), "", unreadable=True)
                continue
            yield replace(note(_id(path.relative_to(root)), path.stem, raw, path.as_uri(), by_name),
                          said_at=_modified(path))


def connector(settings: Settings) -> NotesFolder:
    return NotesFolder(settings.data_dir)


def _notes(root: Path) -> Iterator[Path]:
    """The notes under `root`: `.md` files that are not hidden, not links (a link could lead anywhere the server
    can read), and not inside a hidden folder or a linked one. A folder that cannot be read raises."""
    if not root.is_dir() or root.is_symlink():
        raise FileNotFoundError(2, "no such folder", str(root))

    def refuse(error: OSError) -> None:
        raise error

    found = seen = 0
    for folder, dirs, files in os.walk(root, onerror=refuse, followlinks=False):
        here = Path(folder)
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES or len(here.relative_to(root).parts) > MAX_DEPTH:
            raise StoreUnavailable(f"The notes folder is too large to be one: more than {MAX_ENTRIES:,} files and "
                                   f"folders, or folders more than {MAX_DEPTH} deep; nothing was changed")
        dirs[:] = [d for d in dirs if not d.startswith(".") and not (here / d).is_symlink()]
        for name in files:
            path = here / name
            if name.endswith(".md") and not name.startswith(".") and not path.is_symlink():
                found += 1
                if found > MAX_NOTES:
                    raise StoreUnavailable(f"The notes folder holds more than {MAX_NOTES:,} notes: connect a smaller "
                                           "one; nothing was changed")
                yield path


def _modified(path: Path) -> int | None:
    """When the note was last written (what its "tomorrow" means), unix ms."""
    try:
        return int(path.lstat().st_mtime * 1000)
    except OSError:
        return None


def _read(path: Path) -> str | None:
    """A note's text: a regular file, not followed through a link, at most MAX_NOTE_BYTES; None when it cannot be
    read as one (too large, gone or replaced meanwhile): the sync leaves its mirror as it was."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None
        data = file.read(MAX_NOTE_BYTES + 1)
    if len(data) > MAX_NOTE_BYTES:
        return None
    return data.decode("utf-8", errors="replace")


def _id(relative: Path) -> str:
    """An item's id: its path in the folder (a name that is not UTF-8 kept readable, the same at every sync)."""
    return relative.as_posix().encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _visible(relative: Path) -> bool:
    return not any(part.startswith(".") for part in relative.parts)


def note(relative: str, stem: str, raw: str, url: str, by_name: Mapping[str, str]) -> Item:
    meta, body = front_matter(raw.replace("\r\n", "\n"))
    body = body.strip()
    title = stem
    heading = re.match(r"#\s+(.+)\n?", body)
    if heading:
        title, body = heading.group(1).strip(), body[heading.end():].strip()
    content = f"{title}\n\n{body}" if body else title
    found = [t.strip().lower() for t in [*_listed(meta.get("tags", "")), *HASHTAG.findall(body)]]
    tags = text.dedupe([t for t in found if t and len(t) <= text.MAX_TAG_CHARS])[:text.MAX_TAGS]
    links = tuple(dict.fromkeys(
        target for name in WIKILINK.findall(body)
        if (target := by_name.get(Path(name.strip()).stem.lower() if name.strip().endswith(".md")
                                  else name.strip().lower())) and target != relative))
    return Item(relative, content[:text.MAX_CONTENT_CHARS], tuple(tags), url, links)


def front_matter(raw: str) -> tuple[dict[str, str], str]:
    """The `---` block's keys (a key's list items joined by commas) and the rest."""
    if not raw.startswith("---\n"):
        return {}, raw
    closing = re.search(r"^---[ \t]*$", raw[4:], re.MULTILINE)  # a line of exactly three dashes closes it
    if closing is None:
        return {}, raw
    end = 4 + closing.start() - 1  # the newline before the closing line (4 + 0 - 1 = 3: an empty block)
    meta: dict[str, str] = {}
    key = ""
    for line in raw[4:end].split("\n"):
        if re.match(r"\s*-\s+", line) and key:
            meta[key] = ",".join(filter(None, [meta[key], line.strip()[1:].strip()]))
        elif ":" in line and not line.startswith((" ", "\t")):
            key, _, value = line.partition(":")
            key = key.strip().lower()
            meta[key] = value.strip()
    rest = raw[4 + closing.end():]
    return meta, rest[1:] if rest.startswith("\n") else rest


def _listed(value: str) -> list[str]:
    value = value.strip().strip("[]")
    return [t.strip().strip("'\"").lstrip("#") for t in re.split(r"[,\s]+", value) if t.strip().strip("'\"")]
