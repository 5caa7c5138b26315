"""Upsample (F.interpolate), UpsamplingNearest2d, UpsamplingBilinear2d."""
from .module import Module
from .utils import F

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resizes to `size` or by `scale_factor` with mode nearest / linear / bilinear / bicubic / trilinear."""

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self):
        info = ("scale_factor=" + repr(self.scale_factor)) if self.scale_factor is not None \
            else ("size=" + repr(self.size))
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling."""
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with aligned corners."""
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
