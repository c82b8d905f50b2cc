"""Optional coverage-guided entry point (needs ``pip install atheris``).

    python fuzz/atheris_fuzz.py -atheris_runs=20000 [corpus_dir]

libFuzzer mutates raw bytes, guided by coverage of the regn package; the
custom mutator mixes in the structure-aware mutations of mutate.py so the
input stays a REGN object often enough to get past the frame checks. Unlike
fuzz/run.py this is not reproducible from (seed, index): keep the crash file
libFuzzer writes. Same oracle as run.py (RegnError or normal return).
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import atheris  # noqa: E402

with atheris.instrument_imports(include=["regn"]):
    import regn  # noqa: F401
    import run  # noqa: E402

import mutate  # noqa: E402

BASES = mutate.make_bases()
TMP = os.path.join("/tmp", f"regn-atheris-{os.getpid()}.rgn")


def custom_mutator(data, max_size, seed):
    rng = np.random.default_rng(seed)
    if rng.random() < 0.5 or len(data) < 64:
        out, _ = mutate.mutate(BASES, rng)
    else:
        out = atheris.Mutate(data, max_size)
    return out[:max_size]


def test_one_input(data: bytes):
    try:
        run.run_one(bytes(data), TMP, np.random.default_rng(0))
    except run.Finding as f:
        raise RuntimeError(f"{f.kind}\n{f.detail}") from None


if __name__ == "__main__":
    atheris.Setup(sys.argv + ["-max_len=65536"], test_one_input,
                  custom_mutator=custom_mutator)
    atheris.Fuzz()
