"""One answer on every CPU: the vector index's scores are float32 sums whichever kernel simsimd would pick.

Each float16 dot-product kernel simsimd 6 has is forced in turn (the ones this processor lacks are skipped, by
name), the index's rule for kernels applied as at start-up, and its searches compared with float64 sums of the
same float16 numbers: the same memories in the same order, the same scores to float32 precision.
"""

import numpy as np
import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.adapters.vector_index import kernels
from second_brain.adapters.vector_index import sqlite as vector_sqlite
from second_brain.ports.read_model import Filters
from tests.contract.test_indexing import WS, pending_brain

simsimd = pytest.importorskip("simsimd")

# simsimd 6's float16 dot-product kernels, in the order it prefers them (include/simsimd/simsimd.h).
FLOAT16_DOT_KERNELS = ("sve_f16", "neon_f16", "sapphire", "haswell", "serial")
NEWEST = 1_700_000_000_540  # the newest tenth of pending_brain's 600 memories: a narrow scope


@pytest.fixture
def forced(monkeypatch):
    """Force one float16 kernel (turn off every one simsimd prefers to it), then apply the index's rule for
    kernels as at start-up; the capabilities and the rule's verdict are put back after."""
    before = simsimd.get_capabilities()

    def force(kernel: str) -> None:
        if not kernels.NATIVE.get(kernel):
            pytest.skip(f"this processor has no {kernel} kernel")
        for name in FLOAT16_DOT_KERNELS[: FLOAT16_DOT_KERNELS.index(kernel) + 1]:
            if kernels.NATIVE.get(name) and name != "serial":
                (simsimd.enable_capability if name == kernel else simsimd.disable_capability)(name)
        # The kernel forced is the one that runs: the known float16 adders are seen adding in float16.
        assert kernels.adds_in_float32(simsimd) is (kernel not in kernels.ADDS_IN_FLOAT16)
        monkeypatch.setattr(vector_sqlite, "_SIMD_EXACT", kernels.hold_to_float32(simsimd))

    yield force
    after = simsimd.get_capabilities()
    for name, on in before.items():
        if name != "serial" and after[name] != on:
            (simsimd.enable_capability if on else simsimd.disable_capability)(name)


def exact_top(brain, query: np.ndarray, after: int | None, limit: int) -> list[tuple[str, float]]:
    """The best memories for the query in float64 sums of the float16 numbers the index holds, read from the
    vectors table (one passage per memory here), best first."""
    query64 = query.astype(np.float16).astype(np.float64)
    rows = brain.db.connection().execute(
        "SELECT v.entry_id, v.vector, e.created_at, e.rid FROM vectors v JOIN entries e ON e.id = v.entry_id",
    ).fetchall()
    scored = [(-float(np.frombuffer(blob, np.float32).astype(np.float16).astype(np.float64) @ query64), rid, entry_id)
              for entry_id, blob, created_at, rid in rows if after is None or created_at >= after]
    return [(entry_id, -score) for score, _, entry_id in sorted(scored)[:limit]]


@pytest.mark.parametrize("kernel", FLOAT16_DOT_KERNELS)
def test_every_kernel_gives_the_float32_answer(tmp_path, clock, monkeypatch, forced, kernel):
    monkeypatch.setattr(vector_sqlite, "FIT_ROWS", 256)  # two passes past 256 rows, as past 4,096 in use
    monkeypatch.setattr(vector_sqlite, "FIRST_PASS_DIMS", 384)  # random queries: the first pass on every dimension
    brain = pending_brain(tmp_path, clock, 600, FakeEmbedder(dimension=384))
    try:
        brain.indexer.run_once(1000)
        forced(kernel)
        vectors, rng = brain.vectors, np.random.default_rng(11)
        assert vectors._basis is not None  # the two-pass search, not only the whole matrix
        for n in range(30):
            query = rng.standard_normal(vectors.dimension).astype(np.float32)
            query /= np.linalg.norm(query)
            # Every row in two passes, the newest tenth on its own rows, and the scores of chosen memories.
            for after in (None, NEWEST):
                hits = vectors.search(query, Filters(WS, after=after), 10)
                want = exact_top(brain, query, after, 10)
                assert [h.entry_id for h in hits] == [entry_id for entry_id, _ in want]
                assert [h.score for h in hits] == pytest.approx([score for _, score in want], abs=1e-6, rel=0)
            chosen = {entry_id: score for entry_id, score in exact_top(brain, query, None, 600)[n::20]}
            scores = vectors.scores_for(query, list(chosen))
            assert {k: h.score for k, h in scores.items()} == pytest.approx(chosen, abs=1e-6, rel=0)
    finally:
        brain.close()


class Float16Adder:
    """A simsimd whose float16 dot products add in float16 on a kernel no list knows, on any processor."""

    def __init__(self) -> None:
        self.turned_off: list[str] = []

    def get_capabilities(self) -> dict[str, bool]:
        return {"serial": True, "haswell": True, "sapphire": True, "tomorrow": True}

    def disable_capability(self, name: str) -> None:
        self.turned_off.append(name)

    def cdist(self, a, b, metric, out_dtype, threads=1):
        assert metric == "dot" and out_dtype == "float32"
        total = np.zeros((len(a), len(b)), dtype=np.float16)
        for i in range(a.shape[1]):
            total = (total + np.outer(a[:, i], b[:, i]).astype(np.float16)).astype(np.float16)
        return total.astype(np.float32)


def test_a_kernel_adding_in_float16_that_no_list_names_leaves_the_exact_pass_to_numpy(tmp_path, clock, monkeypatch):
    adder = Float16Adder()
    assert kernels.hold_to_float32(adder) is False and adder.turned_off == ["sapphire"]
    monkeypatch.setattr(vector_sqlite, "_SIMD", adder)
    monkeypatch.setattr(vector_sqlite, "_SIMD_EXACT", False)
    brain = pending_brain(tmp_path, clock, 120, FakeEmbedder(dimension=384))
    try:
        brain.indexer.run_once(1000)
        query = np.random.default_rng(3).standard_normal(384).astype(np.float32)
        query /= np.linalg.norm(query)
        hits = brain.vectors.search(query, Filters(WS), 10)
        want = exact_top(brain, query, None, 10)
        assert [(h.entry_id, h.score) for h in hits] == [(e, pytest.approx(s, abs=1e-6, rel=0)) for e, s in want]
    finally:
        brain.close()


def test_the_kernels_that_add_in_float32_pass_the_probe_and_float16_sums_fail_it():
    """The probe itself: numpy's float32 sums pass it, float16 sums and float16 results of float32 sums fail it."""

    class Numpy(Float16Adder):
        def __init__(self, round_result: bool) -> None:
            super().__init__()
            self.round_result = round_result

        def cdist(self, a, b, metric, out_dtype, threads=1):
            sums = a.astype(np.float32) @ b.astype(np.float32).T
            return sums.astype(np.float16).astype(np.float32) if self.round_result else sums

    assert kernels.adds_in_float32(Numpy(round_result=False)) is True
    assert kernels.adds_in_float32(Numpy(round_result=True)) is False
    assert kernels.adds_in_float32(Float16Adder()) is False
