"""The simsimd kernels the vector index uses, held to one answer on every CPU.

simsimd picks the fastest kernel the processor offers, call by call. Its int8 dot products (the first pass) add
integers: exact whichever kernel runs. Its float16 dot products (the exact pass, the scores recall returns) add in
float32 on most processors, but in float16 on two kinds: AVX-512 FP16 (Intel Sapphire Rapids and later, the
capability `sapphire`) and SVE with half-precision arithmetic (`sve_f16`). There a cosine drifts from float32's by
up to 3e-4, enough to swap two close memories and change the score shown. Those kernels are turned off (for the
whole process: nothing else in it uses simsimd), and a probe then checks that the float16 kernel left adds in
float32; should one not (a kernel this list does not know), the exact pass is left to numpy.
"""

from types import ModuleType

import numpy as np

# simsimd 6's float16 dot-product kernels that add in float16 (include/simsimd/dot.h: `_mm512_fmadd_ph`,
# `svmla_f16_x`). Its others (`neon_f16`, `haswell`, `serial`) widen each element to float32 first.
ADDS_IN_FLOAT16 = ("sapphire", "sve_f16")
# On the probe's rows (cosines near 0.6), float32 sums are within 5e-7 of the exact ones (the serial kernel, adding
# one product at a time, is the least exact); a float16 sum or result is off by 1.5e-4 on the median row.
PROBE_TOLERANCE = 5e-6
# The kernels this processor offers, read before any is turned off (simsimd lets a kernel be turned on again
# without asking the processor: one it lacks would stop the process on an illegal instruction).
NATIVE: dict[str, bool] = {}


def load() -> ModuleType | None:
    """simsimd, or None where it is not installed (every pass is then numpy's)."""
    try:
        import simsimd
    except ImportError:
        return None
    if not NATIVE:
        NATIVE.update(simsimd.get_capabilities())
    return simsimd


def hold_to_float32(simd: ModuleType | None) -> bool:
    """Turn off simsimd's kernels that add float16 dot products in float16; True if the one left adds in float32."""
    if simd is None:
        return False
    capabilities = simd.get_capabilities()
    for name in ADDS_IN_FLOAT16:
        if capabilities.get(name):
            simd.disable_capability(name)
    return adds_in_float32(simd)


def adds_in_float32(simd: ModuleType) -> bool:
    """Whether simsimd's float16 dot products, with the kernel it picks now, are float32 sums."""
    rows, query = _probe()
    got = np.asarray(simd.cdist(query[None, :], rows, metric="dot", out_dtype="float32"))[0]
    exact = rows.astype(np.float64) @ query.astype(np.float64)  # float16 products are exact in float64
    return bool(np.all(np.abs(got - exact) <= PROBE_TOLERANCE))


def _probe() -> tuple[np.ndarray, np.ndarray]:
    """256 rows and a query of 384 dimensions in float16, the same on every machine, their dot products near 0.6."""
    rng = np.random.default_rng(20261207)
    vectors = rng.standard_normal((257, 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    # Rows leaning towards the query: dot products near 0.6, where float16's step is 5e-4.
    vectors = (vectors + 1.5 * vectors[0]) / 2.5
    return vectors[1:].astype(np.float16), vectors[0].astype(np.float16)
