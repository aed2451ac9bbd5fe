"""Words of English: the whole words of the bert-base-uncased WordPiece vocabulary that ships with the local
embedders (about 21,700 lowercase words, names among them), read once. Recall's spelling step never reads a word
of English as a slip of another, however few memories hold it."""

import functools
from pathlib import Path

VOCAB = Path(__file__).resolve().parent / "embedder" / "minilm_vocab.txt"  # the embedders' own (embedder/local.py)


@functools.cache
def english_words() -> frozenset[str]:
    lines = VOCAB.read_text(encoding="utf-8").split()
    return frozenset(word for word in lines if word.isalpha() and word.isascii() and word.islower())
