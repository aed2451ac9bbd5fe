"""A folder of Markdown notes (an Obsidian vault, any notes folder): each note one mirror.

A note's mirror reads as its title (its first `# heading`, else its file name) and its body without the front
matter; the front matter's `tags` (a list, or `[a, b]`, or a comma-separated line) and the body's `#tags` are its
tags; `[[wikilinks]]` (`[[Note]]`, `[[Note|shown]]`, `[[Note#heading]]`) name the notes it links to, by file name
as Obsidian resolves them. Hidden folders (`.obsidian`, `.trash`, `.git`) are not notes.
"""

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from ...domain import text
from ...domain.errors import InvalidInput, StoreUnavailable
from ...ports.integrations import Item

WIKILINK = re.compile(r"\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
HASHTAG = re.compile(r"(?:^|\s)#([A-Za-z][\w/-]*)")
MAX_NOTE_BYTES = 1_000_000  # past this a file is no note (an export, a pasted log): skipped


class NotesFolder:
    def check(self, settings: Mapping[str, str]) -> None:
        path = settings.get("path", "").strip()
        if not path:
            raise InvalidInput("A notes folder needs settings.path: the folder's absolute path")
        if not os.path.isabs(path):
            raise InvalidInput(f"settings.path must be an absolute path: {path}")
        if not Path(path).is_dir():
            raise InvalidInput(f"No folder at settings.path: {path}")

    def items(self, settings: Mapping[str, str]) -> Iterator[Item]:
        root = Path(settings.get("path", "")).resolve()
        if not root.is_dir():
            raise StoreUnavailable(f"The notes folder {root} cannot be read (moved, unmounted or deleted?)")
        notes = sorted(p for p in root.rglob("*.md") if _visible(p.relative_to(root)) and p.is_file())
        by_name: dict[str, str] = {}
        for path in notes:  # Obsidian resolves a link by file name; the shortest path wins a tie
            by_name.setdefault(path.stem.lower(), path.relative_to(root).as_posix())
        for path in notes:
            relative = path.relative_to(root).as_posix()
            try:
                if path.stat().st_size > MAX_NOTE_BYTES:
                    continue
                raw = path.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:  # deleted while the folder was read: gone, as the next listing will say
                continue
            except OSError as e:
                raise StoreUnavailable(f"The note {relative} cannot be read: {e.strerror or e}") from e
            yield note(relative, path.stem, raw, path.as_uri(), by_name)


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
    tags = text.normalize_tags([*_listed(meta.get("tags", "")), *HASHTAG.findall(body)])
    links = tuple(dict.fromkeys(
        target for name in WIKILINK.findall(body)
        if (target := by_name.get(Path(name.strip()).stem.lower() if name.strip().endswith(".md")
                                  else name.strip().lower())) and target != relative))
    return Item(relative, content[:text.MAX_CONTENT_CHARS], tuple(tags), url, links)


def front_matter(raw: str) -> tuple[dict[str, str], str]:
    """The `---` block's keys (a key's list items joined by commas) and the rest."""
    if not raw.startswith("---\n"):
        return {}, raw
    end = raw.find("\n---", 4)
    if end < 0:
        return {}, raw
    meta: dict[str, str] = {}
    key = ""
    for line in raw[4:end].split("\n"):
        if re.match(r"\s*-\s+", line) and key:
            meta[key] = ",".join(filter(None, [meta[key], line.strip()[1:].strip()]))
        elif ":" in line and not line.startswith((" ", "\t")):
            key, _, value = line.partition(":")
            key = key.strip().lower()
            meta[key] = value.strip()
    rest = raw[end + 4:]
    return meta, rest[1:] if rest.startswith("\n") else rest


def _listed(value: str) -> list[str]:
    value = value.strip().strip("[]")
    return [t.strip().strip("'\"").lstrip("#") for t in re.split(r"[,\s]+", value) if t.strip().strip("'\"")]
