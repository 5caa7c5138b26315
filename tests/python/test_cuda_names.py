"""The smaller names of torch.cuda / torch.accelerator / torch.backends.cuda / torch.version that
programs touch before doing any GPU work: present, and answering as PyTorch's do on a machine
without a GPU (their GPU behaviour is in tests/python/cuda/test_cuda_backend.py)."""
import warnings

import pytest

import ember
from cuda_absent import needs_no_gpu, raises_no_gpu


def test_version_names():
    v = ember.version
    assert v.hip is None and v.debug is False
    if ember.cuda._is_compiled():
        major, minor = v.cuda.split(".")
        assert int(major) >= 11 and minor.isdigit()
    else:
        assert v.cuda is None


@needs_no_gpu
def test_cuda_queries_without_a_gpu():
    assert ember.cuda.is_current_stream_capturing() is False
    assert ember.cuda.is_tf32_supported() is False
    with raises_no_gpu():
        ember.cuda.can_device_access_peer(0, 1)
    with raises_no_gpu():
        ember.cuda.set_sync_debug_mode("warn")
    with raises_no_gpu():
        ember.cuda.caching_allocator_alloc(16)
    with raises_no_gpu():
        ember.cuda.FloatTensor(2)
    assert ember.cuda.get_sync_debug_mode() == 0


def test_cuda_legacy_types():
    t = ember.zeros(2)
    assert not isinstance(t, ember.cuda.FloatTensor) and isinstance(t, ember.FloatTensor)
    assert ember.cuda.FloatTensor.dtype is ember.float32 and ember.cuda.LongTensor.is_cuda
    assert not ember.FloatTensor.is_cuda
    assert repr(ember.cuda.FloatTensor) == "<class 'ember.cuda.FloatTensor'>"
    with pytest.raises(RuntimeError, match="expects device type: cpu"):
        ember.FloatTensor(2, device="cuda")


def test_tensor_type_names_and_conversions():
    t = ember.arange(3)
    assert t.type() == "ember.LongTensor"
    assert t.type("torch.DoubleTensor").dtype is ember.float64
    assert t.type("ember.ComplexFloatTensor").dtype is ember.complex64  # not float32 ("...FloatTensor")
    assert t.type(ember.IntTensor).dtype is ember.int32
    assert t.type(ember.float16).dtype is ember.float16
    assert t.type("torch.LongTensor") is t  # already that type: no copy
    for bad in ("torch.Foo", "FloatTensor", "torch.cpu.FloatTensor", "numpy.FloatTensor"):
        with pytest.raises(ValueError, match="invalid type"):
            t.type(bad)
    if not ember.cuda.is_available():
        with raises_no_gpu():
            t.type("torch.cuda.FloatTensor")
    assert t.new(2, 3).dtype is ember.int64 and t.new([1, 2]).tolist() == [1, 2]


def test_tensor_type_matches_torch():
    torch = pytest.importorskip("torch")
    for dtype in ("float32", "float64", "int64", "uint8", "bool", "complex64"):
        e, t = ember.zeros(2, dtype=getattr(ember, dtype)), torch.zeros(2, dtype=getattr(torch, dtype))
        assert e.type().replace("ember.", "torch.") == t.type()
        for name in ("torch.FloatTensor", "torch.ComplexDoubleTensor", "torch.BoolTensor", "torch.CharTensor"):
            assert str(e.type(name).dtype).replace("ember.", "torch.") == str(t.type(name).dtype)


def test_sdp_switches_share_sdpa_kernels_state():
    b, attention = ember.backends.cuda, ember.nn.attention
    assert b.flash_sdp_enabled() and b.math_sdp_enabled() and b.mem_efficient_sdp_enabled() and b.cudnn_sdp_enabled()
    assert b.is_flash_attention_available() is False
    try:
        b.enable_math_sdp(False)
        assert not b.math_sdp_enabled()
        q = ember.randn(1, 2, 3, 4)
        with pytest.raises(RuntimeError):  # no kernel left that Ember has
            ember.nn.functional.scaled_dot_product_attention(q, q, q)
        b.enable_math_sdp(True)
        with attention.sdpa_kernel(attention.SDPBackend.MATH):
            assert not b.flash_sdp_enabled() and b.math_sdp_enabled()
        assert b.flash_sdp_enabled()
        with pytest.warns(FutureWarning, match="deprecated"):
            with b.sdp_kernel(enable_flash=False):
                assert not b.flash_sdp_enabled() and b.math_sdp_enabled()
        assert b.flash_sdp_enabled()
        with pytest.raises(TypeError):
            b.enable_flash_sdp("yes")
    finally:
        for f in (b.enable_flash_sdp, b.enable_math_sdp, b.enable_mem_efficient_sdp, b.enable_cudnn_sdp):
            f(True)
    assert b.preferred_blas_library().name == "Cublas" and b.preferred_linalg_library().name == "Default"
    with pytest.raises(RuntimeError):
        b.preferred_blas_library("cublaslt")


def test_sdp_switches_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        b = lib.backends.cuda
        assert [b.flash_sdp_enabled(), b.math_sdp_enabled(), b.mem_efficient_sdp_enabled(),
                b.cudnn_sdp_enabled()] == [True] * 4
        b.enable_mem_efficient_sdp(False)
        assert not b.mem_efficient_sdp_enabled()
        b.enable_mem_efficient_sdp(True)


@needs_no_gpu
def test_accelerator_names_without_a_gpu():
    a = ember.accelerator
    for call in (a.current_stream, a.empty_host_cache, a.reset_accumulated_memory_stats, a.get_device_capability):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            call()
    with pytest.warns(FutureWarning, match="set_device_index"):
        with pytest.raises(RuntimeError, match="Cannot access accelerator"):
            a.set_device_idx(0)
    with a.device_index(None):  # no device switch: fine without one
        pass


@needs_no_gpu
def test_nvtx_without_a_gpu():
    nvtx = ember.cuda.nvtx
    if ember.cuda._is_compiled():
        # header-only NVTX: works (and does nothing) without a GPU or a tool listening
        depth = nvtx.range_push("outer")
        assert isinstance(depth, int)
        nvtx.mark("here")
        rid = nvtx.range_start("free range")
        nvtx.range_end(rid)
        nvtx.range_pop()
        with nvtx.range("step {}", 3):
            pass
    else:
        with pytest.raises(RuntimeError, match="NVTX functions not installed"):
            nvtx.range_push("x")


def test_no_warning_on_import_paths():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.cuda.get_sync_debug_mode() in (0, 1, 2)
