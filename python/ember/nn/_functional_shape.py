"""ember.nn.functional's resampling functions: interpolate (and the deprecated upsample*),
grid_sample and affine_grid. Re-exported by ember.nn.functional (`from ._functional_shape import *`).

The argument handling follows torch.nn.functional's Python code (which sizes and scale factors are
accepted, which errors are raised); the work is done by the private ops ember._C._ops._upsample,
_grid_sampler and _affine_grid_generator (csrc/ember/ops/interp.cpp)."""
import math
import numbers
import warnings

from .. import _C
from .._C import _ops

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample", "affine_grid"]

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
# the input rank each interpolating mode needs
_MODE_DIM = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


def _is_integer(x):
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return True
    return isinstance(x, _C.TensorBase) and not x.is_floating_point() and x.dim() == 0


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize by nearest, linear, bilinear, bicubic, trilinear or area interpolation."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False

    dim = input.dim() - 2  # spatial dims
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [int(x) for x in size]
        else:
            output_size = [int(size) for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    # "area" always works from an explicit size
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None

    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as input")

    if mode not in _MODES or input.dim() not in (3, 4, 5) or _MODE_DIM.get(mode, input.dim()) != input.dim():
        if mode in _MODE_DIM and input.dim() in (3, 4, 5):
            need = {3: "3D", 4: "4D", 5: "5D"}[_MODE_DIM[mode]]
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need} input")
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})")

    if output_size is None:
        # the size from the scale factors, as PyTorch's C++ computes it; the factors themselves map
        # output to input coordinates
        output_size = [int(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scales = list(scale_factors)
    else:
        scales = [None] * dim
    scales += [None] * (3 - dim)
    if antialias:
        mode = mode + "-aa"  # the private op's name for PyTorch's _upsample_{bilinear,bicubic}2d_aa
    return _ops._upsample(input, output_size, mode, bool(align_corners), *scales)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Resize by interpolation (the older name of interpolate)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Resize by nearest-neighbour interpolation."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Resize by bilinear interpolation with aligned corners."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
                  "details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample an input at the grid's normalized coordinates."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    mode_enum = {"bilinear": 0, "nearest": 1, "bicubic": 2}[mode]
    padding_enum = {"zeros": 0, "border": 1, "reflection": 2}[padding_mode]
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return _ops._grid_sampler(input, grid, mode_enum, padding_enum, align_corners)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid of a batch of affine transforms, for grid_sample."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {tuple(theta.shape)}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {tuple(theta.shape)}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _ops._affine_grid_generator(theta, size, align_corners)
