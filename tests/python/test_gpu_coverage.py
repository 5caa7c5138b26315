"""The README's GPU coverage table is what tools/gpu_coverage.py reads from the sources (codegen's CUDA
guard, the CUDA kernel registrations): an op opened to the GPU, or a kernel added, updates it."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_readme_gpu_table_is_current():
    pytest.importorskip("yaml")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gpu_coverage.py"), "--check",
                        os.path.join(ROOT, "README.md")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_table_names_what_the_gpu_lacks():
    pytest.importorskip("yaml")
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import gpu_coverage

    capable, refused, no_kernel = gpu_coverage.coverage()
    # ops whose bodies loop over host memory stay refused; device-generic ones are open
    assert "frexp" in refused and "linalg_svd" in refused
    for name in ("add", "matmul", "softmax", "cumsum", "upsample", "searchsorted", "addcmul", "quantile"):
        assert name in capable and name not in no_kernel, name
    # an op open to CUDA whose kernel has no CUDA entry is listed, not counted as running
    assert "poisson" in no_kernel and "special_airy_ai" in no_kernel
    assert "multinomial" not in no_kernel  # (its CUDA kernel is registered in kernels/cuda/register.cpp)
