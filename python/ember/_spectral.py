"""torch.stft and torch.istft (and their Tensor methods): the short-time Fourier transform as frames of
the (padded) signal times a window, each transformed by ember.fft, and its inverse by overlap-add
divided by the window's summed square. Both are compositions of differentiable ops."""
import math

from . import _C, fft as _fft
from ._C import _ops
from ._tensor import Tensor

__all__ = ["stft", "istft"]


def _describe(x, n_fft, hop, win, window, normalized, onesided, return_complex, align=None, fn="stft"):
    # PyTorch's messages start with the call, e.g. stft(torch.FloatTensor[116], n_fft=16, ...)
    kind = {_C.float32: "Float", _C.float64: "Double", _C.complex64: "ComplexFloat",
            _C.complex128: "ComplexDouble"}.get(x.dtype, str(x.dtype))
    w = "None" if window is None else f"torch.{kind.replace('Complex', '')}Tensor{{{list(window.shape)}}}"
    tail = f", align_to_window={align}" if fn == "stft" else ""
    return (f"{fn}(torch.{kind}Tensor{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={w}, normalized={int(bool(normalized))}, onesided={onesided}, "
            f"return_complex={None if return_complex is None else int(return_complex)}{tail}) : ")


def _padded_window(window, win_length, n_fft, dtype):
    """The window, centered in n_fft points (zeros around), or ones when none is given."""
    if window is None:
        window = _ops.ones([win_length], dtype=dtype)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _ops.cat([_ops.zeros([left], dtype=window.dtype), window,
                           _ops.zeros([n_fft - win_length - left], dtype=window.dtype)], 0)
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """Short-time Fourier transform: the FFT of windowed frames, shape (batch?, n_freq, n_frames)."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if return_complex is None and not input.is_complex() and (window is None or not window.is_complex()):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        from .nn import functional as F
        x = F.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    def fail(problem):  # the message names the call, as PyTorch's does (built only on failure)
        raise RuntimeError(_describe(x.squeeze(0) if input.dim() == 1 else x, n_fft, hop, win, window, normalized,
                                     onesided, return_complex, align_to_window) + problem)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
             f"{list(window.shape)}")
    if align_to_window and win < n_fft:  # frames start where the window's nonzero part does
        left = (n_fft - win) // 2
        x = _ops.cat([_ops.zeros([x.shape[0], left], dtype=x.dtype), x,
                      _ops.zeros([x.shape[0], n_fft - win - left], dtype=x.dtype)], 1)
    w = _padded_window(window, win, n_fft, x.dtype if not x.is_complex() else _C.float32
                       if x.dtype == _C.complex64 else _C.float64)
    frames = x.unfold(-1, n_fft, hop) * w  # (batch, n_frames, n_fft)
    complex_input = frames.is_complex()
    if onesided is None:
        onesided = not complex_input
    if onesided and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(frames, dim=-1, norm=norm) if onesided else _fft.fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    if return_complex is False:
        return _ops.view_as_real(spec)
    return spec


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """Inverse short-time Fourier transform: overlap-add of the inverse-transformed frames, divided by the
    window's overlapped square."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex dtype, but got "
                           f"{input.dim()}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    spec = input if input.dim() == 3 else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided and n_fft // 2 + 1 != n_freq:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {n_freq}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"istft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if hop <= 0 or hop > win:
        raise RuntimeError(f"istft: expected 0 < hop_length <= win_length, but got hop_length={hop}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"istft: expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    real_dtype = _C.float32 if input.dtype == _C.complex64 else _C.float64
    w = _padded_window(window, win, n_fft, real_dtype)
    norm = "ortho" if normalized else "backward"
    frames = spec.transpose(-1, -2)  # (batch, n_frames, n_freq)
    if return_complex:
        frames = _fft.ifft(frames, n=n_fft, dim=-1, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("istft: a complex window needs return_complex=True")
        # a real signal from a two-sided spectrum: its first half through irfft, as torch (the rest of a
        # non-Hermitian spectrum is not read)
        frames = _fft.irfft(frames[..., :n_fft // 2 + 1], n=n_fft, dim=-1, norm=norm)
    frames = frames * w
    expected = n_fft + hop * (n_frames - 1)
    from .nn import functional as F
    y = _overlap_add(F, frames, n_fft, hop, expected)
    envelope = _overlap_add(F, (w * w).expand(1, n_frames, n_fft), n_fft, hop, expected)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = expected - n_fft // 2
    else:
        end = expected
    end = min(end, expected)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if envelope.numel() and float(envelope.abs().min()) < 1e-11:
        kind = "ComplexFloat" if input.dtype == _C.complex64 else "ComplexDouble"
        raise RuntimeError(f"istft(CPU{kind}Type{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
                           f"win_length={win}, center={int(center)}, normalized={int(bool(normalized))}, "
                           f"length={length}) window overlap add min: 1 (the window's overlapped square is below "
                           "1e-11 somewhere, so the signal cannot be recovered there)")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        y = _ops.cat([y, _ops.zeros([y.shape[0], length - y.shape[-1]], dtype=y.dtype)], 1)
    return y.squeeze(0) if input.dim() == 2 else y


def _overlap_add(F, frames, n_fft, hop, total):
    """Sum of frames (batch, n_frames, n_fft) placed every hop samples: (batch, total)."""
    if frames.is_complex():
        parts = _ops.view_as_real(frames)
        re = _overlap_add(F, parts[..., 0], n_fft, hop, total)
        im = _overlap_add(F, parts[..., 1], n_fft, hop, total)
        return _ops.complex(re, im)
    cols = frames.transpose(1, 2)  # (batch, n_fft, n_frames): fold's columns
    return F.fold(cols, (1, total), (1, n_fft), stride=(1, hop)).reshape(frames.shape[0], total)


def _tensor_stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
                 normalized=False, onesided=None, return_complex=None, align_to_window=None):
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                return_complex, align_to_window)


def _tensor_istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
                  onesided=None, length=None, return_complex=False):
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)


_tensor_stft.__doc__ = stft.__doc__
_tensor_istft.__doc__ = istft.__doc__
Tensor.stft = _tensor_stft
Tensor.istft = _tensor_istft
