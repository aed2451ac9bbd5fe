"""Which embedding model a brain on one machine uses, and loading it: apart from `bootstrap` so that a server can
start loading the model first thing, before it imports the rest of the brain (the model loads on one core while the
imports run on the other)."""

import logging
from functools import partial

from .domain.errors import BrainError
from .ports.embedder import Embedder
from .settings import Settings

log = logging.getLogger("second_brain")


def load_embedder(settings: Settings, threads: int = 0, background: bool = False) -> Embedder | None:
    """The configured embedder, or None (keyword-only recall) if it is off or cannot load. `local` is e5-small-v2
    from its Maven jar, or MiniLM from its PyPI package when the jar is not there; `minilm` is MiniLM. With
    `background`, the model chosen loads on a thread (0.35 s for e5) while the caller goes on."""
    if settings.embedder == "openai":
        return _openai_compatible(settings)
    if settings.embedder == "mpnet":
        return _mpnet(settings, threads, background)
    if settings.embedder not in ("local", "minilm"):  # none, or a cloud embedder the AWS composition builds
        return None
    try:
        from .adapters.embedder.local import E5_JAR, E5SmallEmbedder, MiniLMEmbedder
    except ImportError as exc:
        log.error("semantic search is unavailable: the local model is not installed (pip install "
                  "'second-brain[local]'): %s", exc)
        return None
    if background:
        from .adapters.embedder.background import BackgroundEmbedder

        jar = settings.embedder_jar or E5_JAR
        if settings.embedder == "local" and jar.exists():
            return BackgroundEmbedder(partial(E5SmallEmbedder, threads=threads, jar=jar), E5SmallEmbedder.model_id,
                                      E5SmallEmbedder.dimension, E5SmallEmbedder.query_floor)
        if settings.embedder == "local":
            log.warning("using the weaker MiniLM embedder: the e5-small-v2 model is not installed (%s is missing)",
                        jar)
        return BackgroundEmbedder(partial(MiniLMEmbedder, threads=threads), MiniLMEmbedder.model_id,
                                  MiniLMEmbedder.dimension, MiniLMEmbedder.query_floor)
    if settings.embedder == "local":
        try:
            return E5SmallEmbedder(threads=threads, jar=settings.embedder_jar)
        except BrainError as exc:
            log.warning("using the weaker MiniLM embedder: %s", exc.message)
    try:
        return MiniLMEmbedder(threads=threads)
    except BrainError as exc:
        log.error("semantic search is unavailable: %s", exc.message)
        return None


def _openai_compatible(settings: Settings) -> Embedder | None:
    """The model behind BRAIN_EMBEDDING_URL, asked once for its dimension; None (keyword-only recall, said in the
    log and in recall's `semantic_unavailable`) when it does not answer."""
    from .adapters.embedder.openai_compat import OpenAICompatibleEmbedder
    from .domain.errors import SemanticUnavailable

    key = settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None
    try:
        return OpenAICompatibleEmbedder(settings.embedding_url, settings.embedding_model, key,
                                        settings.embedding_timeout, settings.embedding_query_prefix,
                                        settings.embedding_passage_prefix, settings.embedding_query_floor)
    except SemanticUnavailable as exc:
        log.error("semantic search is unavailable: %s", exc.message)
        return None


def _mpnet(settings: Settings, threads: int, background: bool) -> Embedder | None:
    """all-mpnet-base-v2 as `make mpnet` installed it (436 MB: loading takes seconds, so on a thread when asked);
    None, said in the log, when it is not installed or does not load."""
    try:
        from .adapters.embedder.mpnet import MPNetEmbedder
    except ImportError as exc:
        log.error("semantic search is unavailable: the local runtime is not installed: %s", exc)
        return None
    if background:
        from .adapters.embedder.background import BackgroundEmbedder

        return BackgroundEmbedder(partial(MPNetEmbedder, settings.mpnet_dir, threads), MPNetEmbedder.model_id,
                                  MPNetEmbedder.dimension, MPNetEmbedder.query_floor)
    try:
        return MPNetEmbedder(settings.mpnet_dir, threads)
    except BrainError as exc:
        log.error("semantic search is unavailable: %s", exc.message)
        return None
